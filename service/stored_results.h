// StoredResults: what a job of the job service left in its results folder (the state
// directory's jobs/<id>/results/, job_manager.h), as the gRPC layer streams it back: the
// trained variables' .npy files, the trace and its summary, with the job's steps.
//
//   StoredResults results;
//   results.job = info;                                  // the manager fills job and steps
//   SOFTWIRE_RETURN_IF_ERROR(ReadStoredResults(job_directory, &results));
//
// Threading: reads files only; callers keep writers off the job's folder (a job's results are
// written before its terminal event, and read only after it).
#ifndef SOFTWIRE_SERVICE_STORED_RESULTS_H_
#define SOFTWIRE_SERVICE_STORED_RESULTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/jobs.pb.h"
#include "proto/tensor.pb.h"

namespace softwire {
namespace service {

// A stored variable of a job's results.
struct StoredVariable {
  std::string name;        // "fc1.weight".
  std::string npy_path;    // Its .npy file, in the job's results folder.
  proto::TensorDesc desc;  // Logical type and shape.
  int64_t bytes = 0;       // Of its data.
};

// What a job left behind: every file path lies in the job's results folder.
struct StoredResults {
  proto::JobInfo job;
  std::vector<proto::StepMetrics> steps;
  std::vector<StoredVariable> variables;  // Empty unless the job succeeded.
  std::string trace_path;                 // Empty for an untraced job.
  std::string trace_summary;              // The summary's text; empty without a trace.
};

// Fills `results`' variables (when results->job says the job succeeded: each variable of the
// job's plan.pb whose .npy file is there), trace_path and trace_summary (when it was traced)
// from `job_directory` (jobs/<id>). Errors: the plan of a job that succeeded cannot be read.
Status ReadStoredResults(const std::string& job_directory, StoredResults* results);

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_STORED_RESULTS_H_
