// ReceiveBuffer: reads a connection's bytes through a small buffer, so that the frame headers
// and protocol messages that follow one another on a stream (a fill's header, its Ready, other
// sends' Releases) come in with one system call instead of two per frame, while a fill's
// payload still goes from the socket straight into its slot.
//
// ReceiveAll(bytes) first hands out what the buffer holds; a remainder of at least
// `direct_bytes` is then received straight into the destination (no copy), each recvmsg
// offering the buffer behind it, so the frames that already follow the payload (its Ready)
// come in with its last bytes rather than with a recv of their own; a smaller one
// refills the buffer with whatever the socket has ready (one recv of up to `capacity` bytes,
// waiting only for the first), so the next frames are already here. At most `capacity` bytes of
// a payload are copied once more than without the buffer.
//
// Threading: one reading thread (as Socket's receive side). Ownership: borrows the socket, which
// outlives it.
#ifndef SOFTWIRE_RUNTIME_NET_RECEIVE_BUFFER_H_
#define SOFTWIRE_RUNTIME_NET_RECEIVE_BUFFER_H_

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "runtime/net/socket.h"

namespace softwire {
namespace runtime {
namespace net {

class ReceiveBuffer {
 public:
  static constexpr int64_t kCapacity = 4096;  // 46 message frames, or a header and some bytes.

  explicit ReceiveBuffer(Socket* socket, int64_t capacity = kCapacity,
                         int64_t direct_bytes = kCapacity);

  // Exactly `bytes` into `data`; Unavailable on end of stream (or shutdown) before them.
  Status ReceiveAll(void* data, int64_t bytes);

  // Bytes received and not yet handed out.
  int64_t buffered() const { return end_ - begin_; }

 private:
  Status ReceiveDirect(char* at, int64_t bytes);

  Socket* const socket_;
  const int64_t direct_bytes_;
  std::vector<char> buffer_;
  int64_t begin_ = 0;  // Handed out up to here.
  int64_t end_ = 0;    // Received up to here.
};

}  // namespace net
}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_NET_RECEIVE_BUFFER_H_
