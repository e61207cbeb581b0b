#include "service/stored_results.h"

#include <filesystem>
#include <utility>

#include "base/dtype.h"
#include "base/file.h"
#include "base/shape.h"
#include "proto/tensor_desc.h"
#include "runtime/host/plan_variables.h"
#include "service/job_store.h"

namespace softwire {
namespace service {

Status ReadStoredResults(const std::string& job_directory, StoredResults* results) {
  const std::string results_directory = JobStore::ResultsDirectory(job_directory);
  std::error_code error;
  if (results->job.state() == proto::JOB_STATE_SUCCEEDED) {
    SOFTWIRE_ASSIGN_OR_RETURN(proto::Plan plan, JobStore::ReadPlan(job_directory));
    for (const proto::PlanVariable& variable : plan.variable()) {
      StatusOr<std::string> path =
          runtime::VariableFilePath(results_directory + "/variables", variable.name());
      if (!path.ok() || !std::filesystem::is_regular_file(*path, error)) continue;
      StoredVariable stored;
      stored.name = variable.name();
      stored.npy_path = *path;
      stored.desc = variable.tensor();
      stored.bytes = ShapeOf(variable.tensor()).NumElements() * SizeOf(DTypeOf(variable.tensor()));
      results->variables.push_back(std::move(stored));
    }
  }
  const std::string trace = results_directory + "/trace.json";
  if (std::filesystem::is_regular_file(trace, error)) {
    results->trace_path = trace;
    StatusOr<std::string> summary = ReadFile(trace + ".summary.txt");
    if (summary.ok()) results->trace_summary = std::move(*summary);
  }
  return Status::Ok();
}

}  // namespace service
}  // namespace softwire
