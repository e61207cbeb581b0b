#include "runtime/net/receive_buffer.h"

#include <sys/uio.h>

#include <algorithm>
#include <cstring>

namespace softwire {
namespace runtime {
namespace net {

ReceiveBuffer::ReceiveBuffer(Socket* socket, int64_t capacity, int64_t direct_bytes)
    : socket_(socket),
      direct_bytes_(direct_bytes),
      buffer_(static_cast<size_t>(std::max<int64_t>(capacity, 64))) {}

Status ReceiveBuffer::ReceiveAll(void* data, int64_t bytes) {
  char* at = static_cast<char*>(data);
  while (bytes > 0) {
    if (begin_ < end_) {
      const int64_t taken = std::min(bytes, end_ - begin_);
      std::memcpy(at, buffer_.data() + begin_, static_cast<size_t>(taken));
      begin_ += taken;
      at += taken;
      bytes -= taken;
      continue;
    }
    if (bytes >= direct_bytes_) return ReceiveDirect(at, bytes);
    SOFTWIRE_ASSIGN_OR_RETURN(
        int64_t got, socket_->ReceiveSome(buffer_.data(), static_cast<int64_t>(buffer_.size())));
    begin_ = 0;
    end_ = got;
  }
  return Status::Ok();
}

// A payload straight into its destination (no copy). Each call also offers the empty buffer
// behind it, so the one that ends the payload takes the frames already after it (its Ready,
// other sends' Releases) instead of leaving them to a recv of their own.
Status ReceiveBuffer::ReceiveDirect(char* at, int64_t bytes) {
  while (bytes > 0) {
    const iovec parts[2] = {{at, static_cast<size_t>(bytes)}, {buffer_.data(), buffer_.size()}};
    SOFTWIRE_ASSIGN_OR_RETURN(int64_t got, socket_->ReceiveSome(parts, 2));
    if (got > bytes) {  // The payload is in; what followed it is buffered.
      begin_ = 0;
      end_ = got - bytes;
      return Status::Ok();
    }
    at += got;
    bytes -= got;
  }
  return Status::Ok();
}

}  // namespace net
}  // namespace runtime
}  // namespace softwire
