// Socket: the few POSIX TCP calls the data plane makes, with Status errors naming the address.
// A Socket owns its file descriptor and closes it once; Shutdown wakes a thread blocked in
// accept, recv or send on it (from any thread), which is how the data plane stops its threads.
//
// Threading: one thread sends and one receives on a socket at a time; Shutdown from any thread.
#ifndef SOFTWIRE_RUNTIME_NET_SOCKET_H_
#define SOFTWIRE_RUNTIME_NET_SOCKET_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "base/status.h"

struct iovec;

namespace softwire {
namespace runtime {
namespace net {

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() { Close(); }
  Socket(Socket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  // Listens on "host:port" (port 0: a free one; host an IPv4 address or "localhost").
  static StatusOr<Socket> Listen(const std::string& address);
  // Connects to "host:port", retrying refused connections until `timeout` (a peer process may
  // still be starting).
  static StatusOr<Socket> Connect(const std::string& address, std::chrono::milliseconds timeout);

  // Blocks for the next connection; Unavailable once Shutdown was called.
  StatusOr<Socket> Accept();
  // "host:port" this socket is bound to.
  StatusOr<std::string> LocalAddress() const;

  // Sends every byte of `iov` (modified as it goes); Unavailable when the peer is gone.
  Status SendAll(struct iovec* iov, int count);
  Status SendAll(const void* data, int64_t bytes);
  // Sends what fits without waiting: the bytes sent (0 when the socket is full); Unavailable
  // when the peer is gone.
  StatusOr<int64_t> TrySend(const struct iovec* iov, int count);
  // Receives exactly `bytes`; Unavailable on end of stream (or shutdown) before them.
  Status ReceiveAll(void* data, int64_t bytes);
  // Receives what the socket has, 1 to `bytes` bytes, waiting only for the first: how many;
  // Unavailable on end of stream (or shutdown).
  StatusOr<int64_t> ReceiveSome(void* data, int64_t bytes);
  // The same into `count` buffers in order (one recvmsg): the first filled before the next.
  StatusOr<int64_t> ReceiveSome(const struct iovec* iov, int count);

  // Whether the peer closed or reset the connection (without reading from it). Thread-safe.
  bool PeerClosed() const;

  void Shutdown();
  void Close();
  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

// Splits "host:port"; InvalidArgument naming `address` when it is not of that form.
Status ParseHostPort(const std::string& address, std::string* host, int* port);

}  // namespace net
}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_NET_SOCKET_H_
