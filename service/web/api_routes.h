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
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
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
  ApiRoutes(JobManager* jobs, const std::atomic<bool>* stopping, int max_streams);

  // Adds every /api/ route to `server`.
  void Install(httplib::Server* server);

  // The timeline JSON of a job's trace, steps "A:B" or "" (timeline_json.h); the last few are
  // kept, since a finished job's trace never changes and a large one takes a while to read.
  StatusOr<std::string> Timeline(const std::string& job_id, const std::string& steps);

 private:
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
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_WEB_API_ROUTES_H_
