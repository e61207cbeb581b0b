// The job service's messages as the web view's JSON (docs/WEB.md, "Endpoints"): plain objects
// with snake_case keys and numbers as numbers (int64 counts stay exact up to 2^53, far above
// any step or byte count a job has), not protobuf's JSON mapping, whose int64s are strings.
//
//   nlohmann::json job = JobInfoJson(info);   // {"job_id": "job-3", "state": "running", ...}
//
// Threading: pure functions of their arguments.
#ifndef SOFTWIRE_SERVICE_WEB_WEB_JSON_H_
#define SOFTWIRE_SERVICE_WEB_WEB_JSON_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "proto/jobs.pb.h"
#include "runtime/host/stall_report.h"

namespace softwire {
namespace service {

// "queued", "running", "succeeded", "failed", "cancelled"; "unspecified" otherwise.
std::string JobStateName(proto::JobState state);
// True for succeeded, failed and cancelled.
bool IsTerminalState(proto::JobState state);

nlohmann::json PlanSummaryJson(const proto::PlanSummary& plan);
nlohmann::json StepMetricsJson(const proto::StepMetrics& step);
// Every field of JobInfo; "plan" only when the job was compiled.
nlohmann::json JobInfoJson(const proto::JobInfo& job);
// {"sequence", "time_unix", "kind": "step"|"queued"|..., and the kind's fields under its name}.
nlohmann::json JobEventJson(const proto::JobEvent& event);
nlohmann::json DeviceInfoJson(const proto::DeviceInfo& device);
// The live diagnosis: the job's counters and one object per unfinished actor.
nlohmann::json WaitStatesJson(const runtime::JobWaitStates& waits);

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_WEB_WEB_JSON_H_
