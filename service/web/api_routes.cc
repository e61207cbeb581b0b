#include "service/web/api_routes.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "base/thread_name.h"
#include "service/web/job_form.h"
#include "service/web/nodes_json.h"
#include "service/web/timeline_json.h"
#include "service/web/web_json.h"
#include "trace/chrome_trace.h"

namespace softwire {
namespace service {
namespace {

constexpr size_t kTimelineCacheSize = 4;
// JSON goes out uncompressed: httplib compresses "application/json" with brotli at its highest
// quality whenever a browser accepts it, about 1 MB/s, so a 100,000-firing timeline took 11 s.
// (With the charset the type no longer matches httplib's list of compressible types.)
constexpr char kJsonType[] = "application/json; charset=utf-8";
constexpr std::chrono::milliseconds kDiagnosisTimeout(500);
// A job id in a path: "job-12" (anything else is a 404 before JobManager is asked).
constexpr char kJobPath[] = R"(/api/jobs/(job-[0-9]{1,18}))";

int HttpStatusOf(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kUnimplemented:
      return 501;
    default:
      return 500;
  }
}

void SendJson(httplib::Response& response, const nlohmann::json& json) {
  response.set_content(json.dump(), kJsonType);
}

void SendError(httplib::Response& response, const Status& status) {
  response.status = HttpStatusOf(status.code());
  SendJson(response, {{"error", status.message()}, {"code", StatusCodeName(status.code())}});
}

// The job's step metrics so far, from its event feed.
StatusOr<nlohmann::json> StepsJson(JobManager* jobs, const std::string& job_id) {
  SOFTWIRE_ASSIGN_OR_RETURN(std::vector<proto::JobEvent> events,
                            jobs->WaitForEvents(job_id, 1, std::chrono::milliseconds(0)));
  nlohmann::json steps = nlohmann::json::array();
  for (const proto::JobEvent& event : events) {
    if (event.has_step()) steps.push_back(StepMetricsJson(event.step()));
  }
  nlohmann::json json = {{"job_id", job_id}, {"steps", steps}};
  if (!events.empty()) json["last_event"] = events.back().sequence();
  return json;
}

std::vector<FormPart> FormParts(const httplib::Request& request) {
  std::vector<FormPart> parts;
  for (const auto& [name, file] : request.files) {
    parts.push_back({name, file.filename, file.content});
  }
  return parts;
}

}  // namespace

ApiRoutes::ApiRoutes(JobManager* jobs, const std::atomic<bool>* stopping, int max_streams)
    : jobs_(jobs),
      stopping_(stopping),
      max_streams_(max_streams),
      jobs_feed_(jobs),
      warmer_([this] { WarmTimelines(); }) {}

ApiRoutes::~ApiRoutes() {
  warmer_.join();
}

void ApiRoutes::WarmTimelines() {
  NameCurrentThread("sw:web/warm");
  std::string warmed;  // The newest succeeded job looked at.
  while (!*stopping_) {
    std::this_thread::sleep_for(kStreamPoll);
    const std::vector<proto::JobInfo> newest = jobs_->ListJobs({proto::JOB_STATE_SUCCEEDED}, 1);
    if (newest.empty() || newest[0].job_id() == warmed) continue;
    warmed = newest[0].job_id();
    StatusOr<std::string> timeline = Timeline(warmed, "");  // NotFound without a trace.
    (void)timeline;
  }
}

bool ApiRoutes::ClaimStream() {
  if (open_streams_.fetch_add(1) < max_streams_) return true;
  open_streams_.fetch_sub(1);
  return false;
}

void ApiRoutes::ReleaseStream() {
  open_streams_.fetch_sub(1);
}

StatusOr<std::string> ApiRoutes::Timeline(const std::string& job_id, const std::string& steps) {
  const std::string key = job_id + " " + steps;
  {
    std::unique_lock<std::mutex> lock(timeline_mutex_);
    // One build per timeline: a page that asks while the warmer builds it waits for it.
    timeline_built_.wait(lock, [&] { return building_.count(key) == 0; });
    for (auto it = timeline_cache_.begin(); it != timeline_cache_.end(); ++it) {
      if (it->first != key) continue;
      timeline_cache_.splice(timeline_cache_.begin(), timeline_cache_, it);
      return it->second;
    }
    building_.insert(key);
  }
  StatusOr<std::string> built = BuildTimeline(job_id, steps);
  std::lock_guard<std::mutex> lock(timeline_mutex_);
  building_.erase(key);
  timeline_built_.notify_all();
  if (!built.ok()) return built.status();
  timeline_cache_.emplace_front(key, *built);
  if (timeline_cache_.size() > kTimelineCacheSize) timeline_cache_.pop_back();
  return built;
}

StatusOr<std::string> ApiRoutes::BuildTimeline(const std::string& job_id,
                                               const std::string& steps) {
  SOFTWIRE_ASSIGN_OR_RETURN(TimelineSteps window, ParseTimelineSteps(steps));
  SOFTWIRE_ASSIGN_OR_RETURN(StoredResults results, jobs_->GetResults(job_id));
  if (results.trace_path.empty()) {
    return NotFoundError("job " + job_id +
                         " has no trace: submit it with the trace box ticked (softwire submit "
                         "--trace)");
  }
  SOFTWIRE_ASSIGN_OR_RETURN(trace::TraceModel model, trace::ReadChromeTrace(results.trace_path));
  return TimelineJson(model, trace::Summarize(model), window).dump();
}

void ApiRoutes::Install(httplib::Server* server) {
  server->Get("/api/jobs", [this](const httplib::Request&, httplib::Response& response) {
    response.set_content(jobs_feed_.Snapshot(), kJsonType);
  });

  server->Post("/api/jobs", [this](const httplib::Request& request, httplib::Response& response) {
    if (!request.is_multipart_form_data()) {
      SendError(response,
                InvalidArgumentError("POST /api/jobs takes multipart/form-data with a 'job' file"));
      return;
    }
    StatusOr<proto::JobSubmission> submission = JobSubmissionFromForm(FormParts(request));
    if (!submission.ok()) return SendError(response, submission.status());
    StatusOr<SubmittedJob> submitted = jobs_->Submit(*submission);
    if (!submitted.ok()) return SendError(response, submitted.status());
    response.status = submitted->existing ? 200 : 201;
    SendJson(response, {{"job", JobInfoJson(submitted->job)}, {"existing", submitted->existing}});
  });

  server->Get("/api/jobs/feed", [this](const httplib::Request&, httplib::Response& response) {
    if (!ClaimStream()) {
      return SendError(response, UnavailableError("too many open feeds; close a page"));
    }
    response.set_header("Cache-Control", "no-cache");
    response.set_chunked_content_provider(
        "text/event-stream",
        [this](size_t, httplib::DataSink& sink) {
          jobs_feed_.Serve(
              [&sink](const std::string& bytes) {
                return sink.is_writable() && sink.write(bytes.data(), bytes.size());
              },
              stopping_);
          sink.done();
          return true;
        },
        [this](bool) { ReleaseStream(); });
  });

  server->Get(kJobPath, [this](const httplib::Request& request, httplib::Response& response) {
    StatusOr<proto::JobInfo> job = jobs_->GetJob(request.matches[1]);
    if (!job.ok()) return SendError(response, job.status());
    SendJson(response, JobInfoJson(*job));
  });

  server->Get(std::string(kJobPath) + "/steps",
              [this](const httplib::Request& request, httplib::Response& response) {
                StatusOr<nlohmann::json> steps = StepsJson(jobs_, request.matches[1]);
                if (!steps.ok()) return SendError(response, steps.status());
                SendJson(response, *steps);
              });

  server->Get(std::string(kJobPath) + "/events",
              [this](const httplib::Request& request, httplib::Response& response) {
                const std::string job_id = request.matches[1];
                StatusOr<proto::JobInfo> job = jobs_->GetJob(job_id);
                if (!job.ok()) return SendError(response, job.status());
                if (!ClaimStream()) {
                  return SendError(response, UnavailableError("too many open feeds; close a page"));
                }
                const int64_t after = ResumeAfter(request.get_header_value("Last-Event-ID"),
                                                  request.get_param_value("from"));
                // Shared: httplib copies the provider (a std::function); every copy drives one
                // stream.
                auto stream = std::make_shared<JobEventStream>(jobs_, job_id, after, stopping_);
                response.set_header("Cache-Control", "no-cache");
                response.set_chunked_content_provider(
                    "text/event-stream",
                    [stream](size_t, httplib::DataSink& sink) {
                      const bool more = stream->Next([&sink](const std::string& bytes) {
                        return sink.is_writable() && sink.write(bytes.data(), bytes.size());
                      });
                      if (!more) sink.done();
                      return true;
                    },
                    [this](bool) { ReleaseStream(); });
              });

  server->Post(std::string(kJobPath) + "/cancel", [this](const httplib::Request& request,
                                                         httplib::Response& response) {
    StatusOr<proto::JobInfo> job = jobs_->Cancel(request.matches[1], "cancelled from the web view");
    if (!job.ok()) return SendError(response, job.status());
    SendJson(response, JobInfoJson(*job));
  });

  server->Get(std::string(kJobPath) + "/trace", [this](const httplib::Request& request,
                                                       httplib::Response& response) {
    StatusOr<std::string> timeline = Timeline(request.matches[1], request.get_param_value("steps"));
    if (!timeline.ok()) return SendError(response, timeline.status());
    response.set_content(*timeline, kJsonType);
  });

  server->Get(std::string(kJobPath) + "/trace/summary",
              [this](const httplib::Request& request, httplib::Response& response) {
                StatusOr<StoredResults> results = jobs_->GetResults(request.matches[1]);
                if (!results.ok()) return SendError(response, results.status());
                if (results->trace_path.empty()) {
                  return SendError(response, NotFoundError("the job has no trace"));
                }
                response.set_content(results->trace_summary, "text/plain; charset=utf-8");
              });

  server->Get(std::string(kJobPath) + "/diagnosis",
              [this](const httplib::Request& request, httplib::Response& response) {
                StatusOr<runtime::JobWaitStates> waits =
                    jobs_->DescribeWaits(request.matches[1], kDiagnosisTimeout);
                if (!waits.ok()) return SendError(response, waits.status());
                SendJson(response, WaitStatesJson(*waits));
              });

  server->Get("/api/devices", [this](const httplib::Request&, httplib::Response& response) {
    nlohmann::json devices = nlohmann::json::array();
    for (const proto::DeviceInfo& device : jobs_->ListDevices()) {
      devices.push_back(DeviceInfoJson(device));
    }
    SendJson(response, {{"devices", devices}, {"queued", jobs_->QueuedJobs()}});
  });

  server->Get("/api/nodes", [this](const httplib::Request&, httplib::Response& response) {
    NodeRegistry* nodes = jobs_->options().nodes;
    if (nodes == nullptr) return SendJson(response, NodesJson({}, 0));
    SendJson(response, NodesJson(nodes->Nodes(), jobs_->options().nodes_wanted));
  });

  server->Get(std::string(kJobPath) + "/links", [this](const httplib::Request& request,
                                                       httplib::Response& response) {
    StatusOr<StoredResults> results = jobs_->GetResults(request.matches[1]);
    if (!results.ok()) return SendError(response, results.status());
    if (results->trace_path.empty()) {
      return SendError(response, NotFoundError("job " + std::string(request.matches[1]) +
                                               " has no trace: its data plane's bytes per link "
                                               "come from the trace (softwire submit --trace)"));
    }
    StatusOr<trace::TraceModel> model = trace::ReadChromeTrace(results->trace_path);
    if (!model.ok()) return SendError(response, model.status());
    SendJson(response, LinksJson(*model));
  });
}

}  // namespace service
}  // namespace softwire
