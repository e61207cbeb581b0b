#include "runtime/net/socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace softwire {
namespace runtime {
namespace net {
namespace {

std::string ErrnoText() {
  return std::strerror(errno);
}

StatusOr<sockaddr_in> ResolveIpv4(const std::string& address) {
  std::string host;
  int port = 0;
  SOFTWIRE_RETURN_IF_ERROR(ParseHostPort(address, &host, &port));
  if (host == "localhost") host = "127.0.0.1";
  sockaddr_in result{};
  result.sin_family = AF_INET;
  result.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &result.sin_addr) != 1) {
    return InvalidArgumentError("address '" + address + "': '" + host + "' is not an IPv4 address");
  }
  return result;
}

// Large socket buffers let one stream keep a loopback or LAN pipe full; no Nagle: a protocol
// message goes out at once.
void Tune(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

}  // namespace

Status ParseHostPort(const std::string& address, std::string* host, int* port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
    return InvalidArgumentError("address '" + address + "' is not of the form host:port");
  }
  *host = address.substr(0, colon);
  const std::string digits = address.substr(colon + 1);
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 5 ||
      std::stoi(digits) > 65535) {
    return InvalidArgumentError("address '" + address + "': port '" + digits +
                                "' is not a number from 0 to 65535");
  }
  *port = std::stoi(digits);
  return Status::Ok();
}

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

StatusOr<Socket> Socket::Listen(const std::string& address) {
  SOFTWIRE_ASSIGN_OR_RETURN(sockaddr_in where, ResolveIpv4(address));
  Socket socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!socket.valid()) return UnavailableError("socket for " + address + ": " + ErrnoText());
  int one = 1;
  setsockopt(socket.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(socket.fd(), reinterpret_cast<sockaddr*>(&where), sizeof(where)) != 0) {
    return UnavailableError("cannot listen on " + address + ": " + ErrnoText());
  }
  if (listen(socket.fd(), 64) != 0) {
    return UnavailableError("cannot listen on " + address + ": " + ErrnoText());
  }
  return socket;
}

StatusOr<Socket> Socket::Connect(const std::string& address, std::chrono::milliseconds timeout) {
  SOFTWIRE_ASSIGN_OR_RETURN(sockaddr_in where, ResolveIpv4(address));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    Socket socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!socket.valid()) return UnavailableError("socket for " + address + ": " + ErrnoText());
    if (connect(socket.fd(), reinterpret_cast<sockaddr*>(&where), sizeof(where)) == 0) {
      Tune(socket.fd());
      return socket;
    }
    const int error = errno;
    if ((error != ECONNREFUSED && error != EINTR) || std::chrono::steady_clock::now() >= deadline) {
      return UnavailableError("cannot connect to " + address + ": " + std::strerror(error));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

StatusOr<Socket> Socket::Accept() {
  while (true) {
    const int fd = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      Tune(fd);
      return Socket(fd);
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    return UnavailableError("accept: " + ErrnoText());
  }
}

StatusOr<std::string> Socket::LocalAddress() const {
  sockaddr_in where{};
  socklen_t length = sizeof(where);
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&where), &length) != 0) {
    return UnavailableError("getsockname: " + ErrnoText());
  }
  char host[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &where.sin_addr, host, sizeof(host));
  return std::string(host) + ":" + std::to_string(ntohs(where.sin_port));
}

Status Socket::SendAll(struct iovec* iov, int count) {
  while (count > 0) {
    msghdr message{};
    message.msg_iov = iov;
    message.msg_iovlen = static_cast<size_t>(count);
    const ssize_t sent = sendmsg(fd_, &message, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      return UnavailableError("send: " + ErrnoText());
    }
    size_t left = static_cast<size_t>(sent);
    while (count > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
  return Status::Ok();
}

StatusOr<int64_t> Socket::TrySend(const struct iovec* iov, int count) {
  msghdr message{};
  message.msg_iov = const_cast<iovec*>(iov);
  message.msg_iovlen = static_cast<size_t>(count);
  while (true) {
    const ssize_t sent = sendmsg(fd_, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent >= 0) return static_cast<int64_t>(sent);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return int64_t{0};
    return UnavailableError("send: " + ErrnoText());
  }
}

Status Socket::SendAll(const void* data, int64_t bytes) {
  iovec one{const_cast<void*>(data), static_cast<size_t>(bytes)};
  return SendAll(&one, 1);
}

Status Socket::ReceiveAll(void* data, int64_t bytes) {
  char* at = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t got = recv(fd_, at, static_cast<size_t>(bytes), 0);
    if (got == 0) return UnavailableError("the peer closed the connection");
    if (got < 0) {
      if (errno == EINTR) continue;
      return UnavailableError("receive: " + ErrnoText());
    }
    at += got;
    bytes -= got;
  }
  return Status::Ok();
}

StatusOr<int64_t> Socket::ReceiveSome(void* data, int64_t bytes) {
  while (true) {
    const ssize_t got = recv(fd_, data, static_cast<size_t>(bytes), 0);
    if (got > 0) return static_cast<int64_t>(got);
    if (got == 0) return UnavailableError("the peer closed the connection");
    if (errno != EINTR) return UnavailableError("receive: " + ErrnoText());
  }
}

StatusOr<int64_t> Socket::ReceiveSome(const struct iovec* iov, int count) {
  msghdr message{};
  message.msg_iov = const_cast<struct iovec*>(iov);
  message.msg_iovlen = static_cast<size_t>(count);
  while (true) {
    const ssize_t got = recvmsg(fd_, &message, 0);
    if (got > 0) return static_cast<int64_t>(got);
    if (got == 0) return UnavailableError("the peer closed the connection");
    if (errno != EINTR) return UnavailableError("receive: " + ErrnoText());
  }
}

bool Socket::PeerClosed() const {
  pollfd state{fd_, POLLRDHUP, 0};
  return poll(&state, 1, 0) > 0 && (state.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

void Socket::Shutdown() {
  if (fd_ >= 0) shutdown(fd_, SHUT_RDWR);
}

void Socket::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

}  // namespace net
}  // namespace runtime
}  // namespace softwire
