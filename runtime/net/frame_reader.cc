#include "runtime/net/frame_reader.h"

#include <algorithm>

#include "runtime/net/shm_ring.h"

namespace softwire {
namespace runtime {
namespace net {
namespace {

// Reads and drops `bytes` of the socket.
Status Skip(FrameSource& source, int64_t bytes) {
  char scratch[65536];
  for (int64_t left = bytes; left > 0;) {
    const int64_t chunk = std::min<int64_t>(left, sizeof(scratch));
    SOFTWIRE_RETURN_IF_ERROR(source.ReceiveAll(scratch, chunk));
    left -= chunk;
  }
  return Status::Ok();
}

// A fill's payload into `into` (null: dropped), from the socket or the ring.
Status ReceiveFill(const FrameHeader& header, FrameSource& source, bool has_ring, char* into) {
  if (header.type == FrameType::kShmBytes) {
    if (!has_ring) return InvalidArgumentError("ring bytes on a connection without a ring");
    return source.ReceiveRing(into, header.payload_bytes);
  }
  if (into == nullptr) return Skip(source, header.payload_bytes);
  return source.ReceiveAll(into, header.payload_bytes);
}

}  // namespace

Status ReadHello(FrameSource& source, Hello* hello) {
  FrameHeader header;
  SOFTWIRE_RETURN_IF_ERROR(source.ReceiveAll(&header, sizeof(header)));
  if (header.magic != kFrameMagic || header.type != FrameType::kHello ||
      header.payload_bytes > kMaxHelloBytes || header.payload_bytes < 0) {
    return InvalidArgumentError("not a softwire data plane");
  }
  if (header.version != kFrameVersion) {
    return InvalidArgumentError("data plane protocol version " + std::to_string(header.version) +
                                ", this process speaks " + std::to_string(kFrameVersion));
  }
  std::string payload(static_cast<size_t>(header.payload_bytes), '\0');
  SOFTWIRE_RETURN_IF_ERROR(source.ReceiveAll(payload.data(), header.payload_bytes));
  const size_t newline = payload.find('\n');
  hello->ring_name.clear();
  if (newline != std::string::npos) {
    hello->ring_name = payload.substr(newline + 1);
    payload.resize(newline);
    if (!IsRingName(hello->ring_name)) {
      return InvalidArgumentError("the peer offers '" + hello->ring_name +
                                  "', which is not a data-plane ring's name");
    }
  }
  hello->peer_address = std::move(payload);
  return Status::Ok();
}

Status ReadFrameHeader(FrameSource& source, FrameHeader* header) {
  SOFTWIRE_RETURN_IF_ERROR(source.ReceiveAll(header, sizeof(*header)));
  if (header->magic != kFrameMagic || header->payload_bytes < 0) {
    return InvalidArgumentError("garbled frame");
  }
  return Status::Ok();
}

Status DeliverFrame(const FrameHeader& header, FrameSource& source, bool has_ring,
                    FrameHandler& handler) {
  switch (header.type) {
    case FrameType::kMessage: {
      actors::ProtocolMessage message;
      if (header.payload_bytes != static_cast<int64_t>(sizeof(message))) {
        return InvalidArgumentError("garbled message");
      }
      SOFTWIRE_RETURN_IF_ERROR(source.ReceiveAll(&message, sizeof(message)));
      handler.OnMessage(header, message);
      return Status::Ok();
    }
    case FrameType::kWireBytes:
    case FrameType::kShmBytes:
      return ReceiveFill(header, source, has_ring, handler.FillDestination(header));
    default:
      handler.OnDropped(header);
      return Skip(source, header.payload_bytes);
  }
}

Status CheckFill(const FrameHeader& header, const std::vector<std::vector<char*>>& slots,
                 const proto::Plan& plan) {
  const size_t id = static_cast<size_t>(header.register_id);
  if (header.register_id < 0 || id >= slots.size() ||
      id >= static_cast<size_t>(plan.register_def_size()) || header.slot < 0 ||
      static_cast<size_t>(header.slot) >= slots[id].size() ||
      header.payload_bytes > plan.register_def(static_cast<int>(id)).bytes_per_slot()) {
    return InvalidArgumentError("bytes for register " + std::to_string(header.register_id) +
                                " slot " + std::to_string(header.slot) + " (" +
                                std::to_string(header.payload_bytes) +
                                " bytes) do not fit this share");
  }
  return Status::Ok();
}

}  // namespace net
}  // namespace runtime
}  // namespace softwire
