#include "service/submission_check.h"

namespace softwire {
namespace service {
namespace {

int64_t GraphBytes(const proto::JobSubmission& submission) {
  return submission.graph_case() == proto::JobSubmission::kJob
             ? static_cast<int64_t>(submission.job().ByteSizeLong())
             : static_cast<int64_t>(submission.job_text().size());
}

}  // namespace

Status CheckGraphSize(const proto::JobSubmission& submission, const JobLimits& limits) {
  const int64_t bytes = GraphBytes(submission);
  if (bytes <= limits.max_job_bytes) return Status::Ok();
  return ResourceExhaustedError("the job graph takes " + std::to_string(bytes) +
                                " bytes, over the server's limit of " +
                                std::to_string(limits.max_job_bytes));
}

StatusOr<CheckedSubmission> CheckSubmission(const proto::JobSubmission& submission,
                                            const proto::Cluster& server,
                                            const std::string& job_directory,
                                            const std::string& data_root, const JobLimits& limits) {
  SOFTWIRE_RETURN_IF_ERROR(CheckGraphSize(submission, limits));
  CheckedSubmission checked;
  SOFTWIRE_ASSIGN_OR_RETURN(checked.compiled, CompileSubmission(submission, server, job_directory));
  SOFTWIRE_ASSIGN_OR_RETURN(checked.data, CheckJobData(submission, checked.compiled.file.job,
                                                       data_root, limits.max_upload_bytes));
  return checked;
}

}  // namespace service
}  // namespace softwire
