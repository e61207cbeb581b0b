// Frame: what travels on a data-plane connection (docs/DATA_PLANE.md, "Frames"). Every frame is
// a fixed 40-byte header followed by `payload_bytes` bytes:
//   kHello      once, first on every connection: the payload is the sender's listen address;
//   kMessage    a protocol message to an actor of job `job` (payload: one ProtocolMessage);
//   kWireBytes  one fill of wire register `register_id`, slot `slot`, of job `job` (payload:
//               the bytes, written into the slot as they arrive);
//   kShmBytes   the same fill, its `payload_bytes` coming through the connection's shared-memory
//               ring (shm_ring.h) instead of the socket: nothing follows the header here.
// A hello's payload is "<listen address>" or "<listen address>\n<ring name>" when the sender
// offers a same-host ring.
// Both ends run the same build on the same byte order (x86-64 and aarch64 are little-endian);
// the magic number catches a peer that is something else, and the version a peer of another
// protocol.
#ifndef SOFTWIRE_RUNTIME_NET_FRAME_H_
#define SOFTWIRE_RUNTIME_NET_FRAME_H_

#include <cstdint>
#include <type_traits>

#include "actors/messages.h"

namespace softwire {
namespace runtime {
namespace net {

constexpr uint32_t kFrameMagic = 0x53574450;  // "SWDP".
constexpr uint32_t kFrameVersion = 1;

enum class FrameType : uint32_t { kHello = 1, kMessage = 2, kWireBytes = 3, kShmBytes = 4 };

struct FrameHeader {
  uint32_t magic = kFrameMagic;
  FrameType type = FrameType::kHello;
  actors::JobId job = 0;
  int64_t register_id = -1;  // kWireBytes.
  int32_t slot = 0;          // kWireBytes.
  uint32_t version = kFrameVersion;
  int64_t payload_bytes = 0;
};

static_assert(sizeof(FrameHeader) == 40, "the frame header is part of the wire format");
static_assert(std::is_trivially_copyable<actors::ProtocolMessage>::value,
              "protocol messages travel as their bytes");

}  // namespace net
}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_NET_FRAME_H_
