// The checks JobManager::Submit runs on a submission before it writes anything: the size of
// its graph, its compilation for the server's devices (service/job_compilation.h) and its data
// (service/job_data.h). What fails here is refused; what passes is stored and queued. Kept apart
// from the manager (no runtime, no state directory) so the fuzz target of the submit path
// (fuzz/job_submission_fuzzer.cc) runs exactly these checks on every input.
//
//   StatusOr<CheckedSubmission> checked =
//       CheckSubmission(submission, server_cluster, data_directory, data_root, limits);
//
// Failure: ResourceExhausted for a graph or uploads over `limits`; otherwise as
// CompileSubmission and CheckJobData fail. Reads no file; looks up only the names of files
// under `data_root`. Thread-safe.
#ifndef SOFTWIRE_SERVICE_SUBMISSION_CHECK_H_
#define SOFTWIRE_SERVICE_SUBMISSION_CHECK_H_

#include <cstdint>
#include <string>

#include "base/status.h"
#include "proto/cluster.pb.h"
#include "proto/jobs.pb.h"
#include "service/job_compilation.h"
#include "service/job_data.h"

namespace softwire {
namespace service {

// What a server accepts, stated in `softwire serve --help` and docs/API.md.
struct JobLimits {
  // Jobs queued and not started; a submission past it gets ResourceExhausted.
  int64_t max_queued_jobs = 256;
  // Bytes of a job graph (job_text, or the Job message serialized).
  int64_t max_job_bytes = 4 << 20;
  // Bytes of all data files of one submission together.
  int64_t max_upload_bytes = 256 << 20;
  // Jobs kept with their results; the oldest ended jobs beyond it are deleted. 0: all.
  int64_t max_kept_jobs = 0;
};

// A submission that passed every check. `data` borrows the submission's bytes: the submission
// outlives it.
struct CheckedSubmission {
  CompiledJob compiled;
  JobData data;
};

// ResourceExhausted when the job graph (job_text, or the Job serialized) is over
// `limits.max_job_bytes`. Cheap: Submit runs it before anything else.
Status CheckGraphSize(const proto::JobSubmission& submission, const JobLimits& limits);

// CheckGraphSize, then CompileSubmission for `server` with `job_directory` as the job's data
// directory, then CheckJobData against `data_root` and `limits.max_upload_bytes`.
StatusOr<CheckedSubmission> CheckSubmission(const proto::JobSubmission& submission,
                                            const proto::Cluster& server,
                                            const std::string& job_directory,
                                            const std::string& data_root, const JobLimits& limits);

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_SUBMISSION_CHECK_H_
