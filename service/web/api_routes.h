// ApiRoutes: the web view's endpoints under /api/ (docs/WEB.md, "Endpoints"), each a thin
// conversion between HTTP and JobManager: JSON in web_json.h's shapes, errors as
// {"error": MESSAGE, "code": "INVALID_ARGUMENT"} with the HTTP status of the code (400, 404,
// 409, 429, 503, 500), feeds as server-sent events (event_streams.h).
//
// Ownership and threading: borrows the JobManager and the stop flag, which outlive it; its
// handlers run on the HTTP server's threads, any number at once.
#ifndef SOFTWIRE_SERVICE_WEB_API_ROUTES_H_
#define SOFTWIRE_SERVICE_WEB_API_ROUTES_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "service/job_manager.h"
#include "service/web/event_streams.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace softwire {
namespace service {

class ApiRoutes {
 public:
  // Starts the warmer (below), which runs until `stopping` is set; the destructor joins it.
  ApiRoutes(JobManager* jobs, const std::atomic<bool>* stopping, int max_streams);
  ~ApiRoutes();
  ApiRoutes(const ApiRoutes&) = delete;
  ApiRoutes& operator=(const ApiRoutes&) = delete;

  // Adds every /api/ route to `server`.
  void Install(httplib::Server* server);

  // The timeline JSON of a job's trace, steps "A:B" or "" (timeline_json.h); the last few are
  // kept, since a finished job's trace never changes and a large one takes a while to read
  // (100,000 firings: a 145 MB file, ~4 s). A thread of its own, the warmer, builds the whole
  // trace's timeline of the newest succeeded job once it ended, so the first look is as quick
  // as the next ones; it reads the trace on a core the next job may want, for as long as
  // reading it takes, once per job.
  StatusOr<std::string> Timeline(const std::string& job_id, const std::string& steps);

 private:
  // Reads the trace and builds its timeline (no cache).
  StatusOr<std::string> BuildTimeline(const std::string& job_id, const std::string& steps);
  // The warmer's loop: every kStreamPoll, the newest succeeded job's timeline, once.
  void WarmTimelines();
  // Claims one of the feeds; false when max_streams are open.
  bool ClaimStream();
  void ReleaseStream();

  JobManager* const jobs_;
  const std::atomic<bool>* const stopping_;
  const int max_streams_;
  std::atomic<int> open_streams_{0};
  JobsFeed jobs_feed_;

  std::mutex timeline_mutex_;
  // (job id + " " + steps, JSON), most recent first; at most kTimelineCacheSize.
  std::list<std::pair<std::string, std::string>> timeline_cache_;  // Guarded by timeline_mutex_.
  std::set<std::string> building_;  // Keys being built. Guarded by timeline_mutex_.
  std::condition_variable timeline_built_;
  std::thread warmer_;  // Last: it uses everything above.
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_WEB_API_ROUTES_H_
