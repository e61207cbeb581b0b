// Frame reader: how one inbound data-plane connection is read and checked (frame.h), apart from
// its socket and from the runs its frames go to, so that every check of what a peer sends lives
// here once and is fuzzed (fuzz/data_plane_frames_fuzzer.cc). The data plane (data_plane.cc)
// gives it the socket and ring as a FrameSource and its attached runs as a FrameHandler.
//
// A connection is a hello, then frames until the peer closes it or sends a garbled one:
//   - the hello carries the magic, type kHello, this build's version and 0 to kMaxHelloBytes
//     of payload: "<listen address>" or "<listen address>\n<ring name>", a ring name being one
//     ShmRing::Create makes (IsRingName): a peer cannot make this process open or unlink any
//     other shared-memory segment;
//   - every frame carries the magic and a payload of 0 or more bytes; a kMessage exactly one
//     ProtocolMessage; a fill (kWireBytes, or kShmBytes on a connection whose hello offered a
//     ring) goes where the handler says, or is read and dropped; a frame of another type is
//     dropped with its payload.
// Anything else ends the connection with a Status that says what was wrong; nothing a peer
// sends can make the reader write outside the slot the handler gave it.
#ifndef SOFTWIRE_RUNTIME_NET_FRAME_READER_H_
#define SOFTWIRE_RUNTIME_NET_FRAME_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "actors/messages.h"
#include "base/status.h"
#include "proto/plan.pb.h"
#include "runtime/net/frame.h"

namespace softwire {
namespace runtime {
namespace net {

constexpr int64_t kMaxHelloBytes = 1024;

// Where a connection's bytes come from.
class FrameSource {
 public:
  virtual ~FrameSource() = default;
  // Exactly `bytes` bytes of the socket into `data`, or why not (closed, shut down).
  virtual Status ReceiveAll(void* data, int64_t bytes) = 0;
  // A kShmBytes fill's `bytes` from the connection's ring into `into` (null: skipped). Called
  // only on a connection whose hello offered a ring.
  virtual Status ReceiveRing(char* into, int64_t bytes) = 0;
};

// Where a connection's frames go. The caller of DeliverFrame holds what keeps the handler's
// destinations valid until it returns.
class FrameHandler {
 public:
  virtual ~FrameHandler() = default;
  // A kMessage frame's message (header.job: the job the frame names).
  virtual void OnMessage(const FrameHeader& header, const actors::ProtocolMessage& message) = 0;
  // Where a fill's `header.payload_bytes` go: a slot at least that large, or null to read and
  // drop them (a job not attached, a register or slot its share lacks: see CheckFill).
  virtual char* FillDestination(const FrameHeader& header) = 0;
  // A frame of a type this build does not take, dropped with its payload.
  virtual void OnDropped(const FrameHeader& header) = 0;
};

struct Hello {
  std::string peer_address;  // The peer's listen address.
  std::string ring_name;     // The same-host ring it offers; empty: none.
};

// The hello, first on every connection. InvalidArgument for anything but a softwire data plane
// of this version (the message says which: another version names both).
Status ReadHello(FrameSource& source, Hello* hello);

// One frame's header, checked (magic, payload size).
Status ReadFrameHeader(FrameSource& source, FrameHeader* header);

// The rest of the frame `header` begins: its payload read into where the handler says.
// `has_ring`: the connection's hello offered a ring.
Status DeliverFrame(const FrameHeader& header, FrameSource& source, bool has_ring,
                    FrameHandler& handler);

// Whether a fill of `header` fits a share whose slots are `slots` (one vector per register of
// `plan`): the register and slot exist and the payload fits a slot. The message names them.
Status CheckFill(const FrameHeader& header, const std::vector<std::vector<char*>>& slots,
                 const proto::Plan& plan);

}  // namespace net
}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_NET_FRAME_READER_H_
