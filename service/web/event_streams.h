// The web view's live feeds, as server-sent events (text/event-stream; docs/WEB.md, "Feeds"):
//
//   JobEventStream: one job's events, "id: SEQUENCE\nevent: job\ndata: JSON\n\n" each
//     (web_json.h's JobEventJson), from a sequence on; after the terminal event one
//     "event: end". A page that reconnects sends Last-Event-ID (EventSource does it by itself)
//     and gets every event after it, none missed, none twice. Bursts follow kEventBurst as
//     gRPC WatchJob's follow its kWatchBatch, so a job's steps wake the server and the pages at
//     most 10 times a second.
//   JobsFeed: every job as the jobs page lists it, "id: VERSION\nevent: jobs\ndata: JSON\n\n",
//     sent once at connect and again whenever a job changed (state, step, samples/s). One
//     thread polls JobManager::ListJobs every kJobsPoll while some page listens, builds the
//     JSON once, and every open page gets the same text: ten pages cost one poll.
//
// Both end within kStreamPoll of Stop() or of the page going away, and send a comment line
// every kKeepAlive so proxies keep the connection open.
//
// Threading: JobsFeed is thread-safe; a JobEventStream belongs to the one request it serves.
#ifndef SOFTWIRE_SERVICE_WEB_EVENT_STREAMS_H_
#define SOFTWIRE_SERVICE_WEB_EVENT_STREAMS_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "service/job_manager.h"

namespace softwire {
namespace service {

constexpr std::chrono::milliseconds kStreamPoll(200);
constexpr std::chrono::milliseconds kJobsPoll(250);
// After a burst with a step in it, what comes next waits this long (service/rpc/job_service.h,
// kWatchBatch, says why: a wake-up per step costs the job's cores).
constexpr std::chrono::milliseconds kEventBurst(100);
constexpr std::chrono::seconds kKeepAlive(15);
// The most jobs the jobs feed lists (newest first).
constexpr int kJobsFeedLimit = 200;

// Writes bytes to the page; false once the page has gone.
using StreamWrite = std::function<bool(const std::string& bytes)>;

// One SSE message: "id: ID\nevent: EVENT\ndata: DATA\n\n" (DATA holds no newline: it is JSON
// without them).
std::string SseMessage(int64_t id, const std::string& event, const std::string& data);

// The sequence to resume after: the Last-Event-ID header when it is a number, else
// `from` - 1 when `from` (the ?from= query) is a number >= 1, else 0 (from the first).
int64_t ResumeAfter(const std::string& last_event_id, const std::string& from);

class JobEventStream {
 public:
  JobEventStream(JobManager* jobs, std::string job_id, int64_t after,
                 const std::atomic<bool>* stopping);
  // Writes what came next (waiting up to kStreamPoll for it). False when the stream is over:
  // the job ended and "end" was sent, the page went away, the server stops, or the job is
  // unknown.
  bool Next(const StreamWrite& write);

 private:
  JobManager* const jobs_;
  const std::string job_id_;
  const std::atomic<bool>* const stopping_;
  int64_t next_sequence_;
  std::chrono::steady_clock::time_point last_write_;
  bool step_in_last_burst_ = false;
};

class JobsFeed {
 public:
  explicit JobsFeed(JobManager* jobs);
  ~JobsFeed();  // Stops the poller.
  JobsFeed(const JobsFeed&) = delete;
  JobsFeed& operator=(const JobsFeed&) = delete;

  // Serves one page until it goes or `stopping`: the list at once, then every change.
  void Serve(const StreamWrite& write, const std::atomic<bool>* stopping);

  // The jobs as JSON now ({"jobs": [...], "queued": N}), built on the caller's thread.
  std::string Snapshot() const;

 private:
  void Poll();

  JobManager* const jobs_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int readers_ = 0;        // Guarded by mutex_.
  int64_t version_ = 0;    // Guarded by mutex_.
  std::string text_;       // Guarded by mutex_.
  bool stopping_ = false;  // Guarded by mutex_.
  std::thread poller_;
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_WEB_EVENT_STREAMS_H_
