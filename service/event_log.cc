#include "service/event_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace softwire {
namespace service {
namespace {

constexpr size_t kLengthBytes = 4;
// No event comes near this; a larger length is a torn or foreign record.
constexpr uint32_t kMaxEventBytes = 64 << 20;

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Status ErrnoError(const std::string& what) {
  return InternalError(what + ": " + std::strerror(errno));
}

}  // namespace

bool IsTerminalEvent(const proto::JobEvent& event) {
  return event.has_finished() || event.has_failed() || event.has_cancelled();
}

std::string EventRecord(const proto::JobEvent& event) {
  const std::string body = event.SerializeAsString();
  const uint32_t length = static_cast<uint32_t>(body.size());
  std::string record(kLengthBytes, '\0');
  for (size_t i = 0; i < kLengthBytes; ++i) {
    record[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  }
  return record + body;
}

ParsedEvents ParseEventRecords(const std::string& bytes) {
  ParsedEvents parsed;
  size_t offset = 0;
  while (bytes.size() - offset >= kLengthBytes) {
    uint32_t length = 0;
    for (size_t i = 0; i < kLengthBytes; ++i) {
      length |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
    }
    if (length > kMaxEventBytes || bytes.size() - offset - kLengthBytes < length) break;
    proto::JobEvent event;
    if (!event.ParseFromArray(bytes.data() + offset + kLengthBytes, static_cast<int>(length))) {
      break;
    }
    // A record that does not continue the numbering is not one this log wrote.
    if (event.sequence() != static_cast<int64_t>(parsed.events.size()) + 1) break;
    parsed.events.push_back(std::move(event));
    offset += kLengthBytes + length;
  }
  parsed.whole_bytes = static_cast<int64_t>(offset);
  return parsed;
}

StatusOr<std::unique_ptr<EventLog>> EventLog::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot open the event log '" + path + "'");
  std::unique_ptr<EventLog> log(new EventLog(fd));
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::pread(fd, buffer, sizeof(buffer), static_cast<off_t>(bytes.size()));
    if (got < 0) return ErrnoError("cannot read the event log '" + path + "'");
    if (got == 0) break;
    bytes.append(buffer, static_cast<size_t>(got));
  }
  ParsedEvents parsed = ParseEventRecords(bytes);
  if (parsed.whole_bytes < static_cast<int64_t>(bytes.size()) &&
      ::ftruncate(fd, static_cast<off_t>(parsed.whole_bytes)) != 0) {
    return ErrnoError("cannot cut the torn end off the event log '" + path + "'");
  }
  MutexLock lock(&log->mutex_);
  log->events_ = std::move(parsed.events);
  return log;
}

EventLog::EventLog(int fd) : fd_(fd) {}

EventLog::~EventLog() {
  ::close(fd_);
}

StatusOr<proto::JobEvent> EventLog::Append(proto::JobEvent event) {
  MutexLock lock(&mutex_);
  if (!events_.empty() && IsTerminalEvent(events_.back())) {
    return FailedPreconditionError("the job's feed has ended");
  }
  event.set_sequence(static_cast<int64_t>(events_.size()) + 1);
  if (event.time_unix() == 0) event.set_time_unix(UnixNow());
  const std::string record = EventRecord(event);
  const ssize_t written = ::write(fd_, record.data(), record.size());
  if (written != static_cast<ssize_t>(record.size())) {
    return ErrnoError("cannot append to the event log");
  }
  events_.push_back(event);
  appended_.NotifyAll();
  return event;
}

std::vector<proto::JobEvent> EventLog::WaitSince(int64_t from, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const size_t first = static_cast<size_t>(std::max<int64_t>(from, 1) - 1);
  MutexLock lock(&mutex_);
  while (events_.size() <= first) {
    if (!events_.empty() && IsTerminalEvent(events_.back())) return {};
    if (!appended_.WaitUntil(&lock, deadline)) break;
  }
  if (events_.size() <= first) return {};
  return std::vector<proto::JobEvent>(events_.begin() + static_cast<std::ptrdiff_t>(first),
                                      events_.end());
}

int64_t EventLog::last_sequence() const {
  MutexLock lock(&mutex_);
  return static_cast<int64_t>(events_.size());
}

bool EventLog::ended() const {
  MutexLock lock(&mutex_);
  return !events_.empty() && IsTerminalEvent(events_.back());
}

std::vector<proto::JobEvent> EventLog::events() const {
  MutexLock lock(&mutex_);
  return events_;
}

}  // namespace service
}  // namespace softwire
