// JobForm: a job submitted from the web view's form, as the JobSubmission JobManager::Submit
// takes. The page posts multipart/form-data (docs/WEB.md, "POST /api/jobs"):
//   job          the job file (text-format proto::Job); its file name names the job in errors
//   data         zero or more data files the job names by relative path; each file's name in
//                the form is that path ("data/images.npy"), as `softwire submit` sends them
//   steps        optional: run this many steps instead of the job's own
//   devices, dp, tp, pp  optional: devices, data- and tensor-parallel degrees, pipeline stages
//                (as `softwire submit --devices/--dp/--tp/--pp`)
//   trace        optional: "1" records the actor trace (the timeline page needs one)
//   trace_steps  optional: "A:B", record steps A..B-1 only
//   idempotency_key  optional: a retried form never runs a job twice
//
// Threading: pure.
#ifndef SOFTWIRE_SERVICE_WEB_JOB_FORM_H_
#define SOFTWIRE_SERVICE_WEB_JOB_FORM_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "proto/jobs.pb.h"

namespace softwire {
namespace service {

// One part of a multipart form.
struct FormPart {
  std::string name;       // The field's name.
  std::string file_name;  // The file's name when the part is a file; else empty.
  std::string content;
};

// InvalidArgument naming the field at fault: no job file, two of them, a number that is not
// one, an unknown field.
StatusOr<proto::JobSubmission> JobSubmissionFromForm(const std::vector<FormPart>& parts);

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_WEB_JOB_FORM_H_
