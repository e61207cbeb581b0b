// EventLog: one job's events (proto::JobEvent), numbered 1, 2, 3, ... with no gaps, kept in
// memory for watchers and appended to a file so a restarted server replays them.
//
// The file holds one record per event: the serialized event's length (4 bytes, little-endian)
// and the event. A record is written with one write(2), so a killed server leaves at most one
// torn record, the last: Open ignores it and cuts it off, and appends go on after the last
// whole record.
//
//   StatusOr<std::unique_ptr<EventLog>> log = EventLog::Open("jobs/job-1/events.log");
//   proto::JobEvent event;
//   event.mutable_queued()->set_position(0);
//   (*log)->Append(event);                                      // sequence 1
//   std::vector<proto::JobEvent> seen = (*log)->WaitSince(1, std::chrono::seconds(1));
//
// Threading: thread-safe; WaitSince blocks only its caller. Failure: Open fails with Internal
// when the file cannot be opened; Append with Internal when it cannot be written (the event is
// then not kept in memory either), FailedPrecondition after a terminal event.
#ifndef SOFTWIRE_SERVICE_EVENT_LOG_H_
#define SOFTWIRE_SERVICE_EVENT_LOG_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "proto/jobs.pb.h"

namespace softwire {
namespace service {

// Whether `event` ends a job's feed (finished, failed, cancelled).
bool IsTerminalEvent(const proto::JobEvent& event);

// The whole records of an event file's bytes, in order, and how many bytes they take (the
// rest, if any, is a torn record).
struct ParsedEvents {
  std::vector<proto::JobEvent> events;
  int64_t whole_bytes = 0;
};
ParsedEvents ParseEventRecords(const std::string& bytes);
// One record: the length, then the event.
std::string EventRecord(const proto::JobEvent& event);

class EventLog {
 public:
  // Opens or creates the file at `path` and reads back the events it holds.
  static StatusOr<std::unique_ptr<EventLog>> Open(const std::string& path);
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // Numbers `event` (the next sequence), stamps it with the time when it has none, writes it
  // and wakes the waiters. Returns it as stored.
  StatusOr<proto::JobEvent> Append(proto::JobEvent event) EXCLUDES(mutex_);

  // The events with sequence >= `from` (1 when smaller): at once when there are any, else
  // those that come within `timeout` (empty when none came, or once the feed ended).
  std::vector<proto::JobEvent> WaitSince(int64_t from, std::chrono::milliseconds timeout)
      EXCLUDES(mutex_);

  // The sequence of the latest event; 0 when none.
  int64_t last_sequence() const EXCLUDES(mutex_);
  // Whether the latest event is terminal.
  bool ended() const EXCLUDES(mutex_);
  // Every event, in order.
  std::vector<proto::JobEvent> events() const EXCLUDES(mutex_);

 private:
  explicit EventLog(int fd);

  const int fd_;
  mutable Mutex mutex_;
  CondVar appended_;
  std::vector<proto::JobEvent> events_ GUARDED_BY(mutex_);
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_EVENT_LOG_H_
