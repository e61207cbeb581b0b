// MemoryFrameSource: a FrameSource over bytes in memory, for tests and the frames fuzzer: the
// socket's bytes first, then a ring's (kShmBytes fills read from `ring`, in order).
#ifndef SOFTWIRE_RUNTIME_NET_MEMORY_FRAME_SOURCE_H_
#define SOFTWIRE_RUNTIME_NET_MEMORY_FRAME_SOURCE_H_

#include <cstring>
#include <string>

#include "runtime/net/frame_reader.h"

namespace softwire {
namespace runtime {
namespace net {

class MemoryFrameSource final : public FrameSource {
 public:
  explicit MemoryFrameSource(std::string socket, std::string ring = "")
      : socket_(std::move(socket)), ring_(std::move(ring)) {}

  Status ReceiveAll(void* data, int64_t bytes) override {
    return Take(socket_, &socket_read_, static_cast<char*>(data), bytes, "the peer closed");
  }
  Status ReceiveRing(char* into, int64_t bytes) override {
    return Take(ring_, &ring_read_, into, bytes, "the ring is empty");
  }

  // Bytes of the socket not read yet.
  int64_t socket_left() const { return static_cast<int64_t>(socket_.size() - socket_read_); }

 private:
  static Status Take(const std::string& from, size_t* read, char* into, int64_t bytes,
                     const char* short_read) {
    if (bytes < 0 || static_cast<uint64_t>(bytes) > from.size() - *read) {
      return UnavailableError(short_read);
    }
    if (into != nullptr) std::memcpy(into, from.data() + *read, static_cast<size_t>(bytes));
    *read += static_cast<size_t>(bytes);
    return Status::Ok();
  }

  const std::string socket_;
  const std::string ring_;
  size_t socket_read_ = 0;
  size_t ring_read_ = 0;
};

}  // namespace net
}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_NET_MEMORY_FRAME_SOURCE_H_
