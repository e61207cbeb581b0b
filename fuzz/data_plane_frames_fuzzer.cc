// Fuzz target: the bytes a peer sends on a data-plane connection (runtime/net/frame.h), read by
// the frame reader the data plane uses (runtime/net/frame_reader.h) into a share of three wire
// registers. A broken or hostile peer can send any bytes: the reader must end the connection
// with a Status or deliver each frame, never write outside the slot it was given, read past
// what was sent, or open a segment a peer names.
//
// Input: two bytes n (little-endian, taken modulo what is left), then n bytes the connection's
// same-host ring holds (what kShmBytes fills read), then the socket's bytes: a hello and frames.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"
#include "runtime/net/frame_reader.h"
#include "runtime/net/memory_frame_source.h"
#include "runtime/net/shm_ring.h"

namespace softwire {
namespace {

using runtime::net::FrameHeader;

// Registers of 1, 2 and 3 slots of 0, 8 and 64 bytes, each slot a buffer of its own so that
// AddressSanitizer sees any byte written past it.
class FuzzedShare final : public runtime::net::FrameHandler {
 public:
  FuzzedShare() {
    const int64_t bytes[] = {0, 8, 64};
    for (int r = 0; r < 3; ++r) {
      plan_.add_register_def()->set_bytes_per_slot(bytes[r]);
      slots_.emplace_back();
      for (int s = 0; s <= r; ++s) {
        buffers_.emplace_back(new char[static_cast<size_t>(bytes[r]) + 1]);
        slots_.back().push_back(bytes[r] == 0 ? nullptr : buffers_.back().get());
      }
    }
  }
  void OnMessage(const FrameHeader& header, const actors::ProtocolMessage& message) override {
    if (message.job == header.job) ++delivered_;
  }
  char* FillDestination(const FrameHeader& header) override {
    if (!runtime::net::CheckFill(header, slots_, plan_).ok()) return nullptr;
    char* slot = slots_[static_cast<size_t>(header.register_id)][static_cast<size_t>(header.slot)];
    if (slot != nullptr &&
        header.payload_bytes >
            plan_.register_def(static_cast<int>(header.register_id)).bytes_per_slot()) {
      std::abort();  // CheckFill let through more bytes than the slot holds.
    }
    return slot;
  }
  void OnDropped(const FrameHeader&) override {}

 private:
  proto::Plan plan_;
  std::vector<std::unique_ptr<char[]>> buffers_;
  std::vector<std::vector<char*>> slots_;
  int64_t delivered_ = 0;
};

}  // namespace
}  // namespace softwire

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace softwire::runtime::net;
  if (size < 2) return 0;
  const size_t left = size - 2;
  const size_t ring_bytes = left == 0 ? 0 : (data[0] | (size_t{data[1]} << 8)) % (left + 1);
  const char* bytes = reinterpret_cast<const char*>(data + 2);
  MemoryFrameSource source(std::string(bytes + ring_bytes, left - ring_bytes),
                           std::string(bytes, ring_bytes));
  Hello hello;
  if (!ReadHello(source, &hello).ok()) return 0;
  if (!hello.ring_name.empty() && !IsRingName(hello.ring_name)) std::abort();
  softwire::FuzzedShare share;
  for (;;) {
    FrameHeader header;
    if (!ReadFrameHeader(source, &header).ok()) return 0;
    if (!DeliverFrame(header, source, !hello.ring_name.empty(), share).ok()) return 0;
  }
}
