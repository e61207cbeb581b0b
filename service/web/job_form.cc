#include "service/web/job_form.h"

#include <cstdint>

namespace softwire {
namespace service {
namespace {

StatusOr<int64_t> ParseCount(const FormPart& part) {
  const std::string& text = part.content;
  if (text.empty() || text.size() > 15) {
    return InvalidArgumentError("form field '" + part.name + "': expected a count, got '" +
                                text.substr(0, 32) + "'");
  }
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return InvalidArgumentError("form field '" + part.name + "': expected a count, got '" +
                                  text.substr(0, 32) + "'");
    }
    value = value * 10 + (c - '0');
  }
  return value;
}

StatusOr<std::pair<int64_t, int64_t>> ParseStepRange(const FormPart& part) {
  const size_t colon = part.content.find(':');
  if (colon == std::string::npos) {
    return InvalidArgumentError("form field 'trace_steps': expected A:B, got '" +
                                part.content.substr(0, 32) + "'");
  }
  SOFTWIRE_ASSIGN_OR_RETURN(int64_t first,
                            ParseCount({part.name, "", part.content.substr(0, colon)}));
  SOFTWIRE_ASSIGN_OR_RETURN(int64_t end,
                            ParseCount({part.name, "", part.content.substr(colon + 1)}));
  return std::make_pair(first, end);
}

}  // namespace

StatusOr<proto::JobSubmission> JobSubmissionFromForm(const std::vector<FormPart>& parts) {
  proto::JobSubmission submission;
  bool has_job = false;
  for (const FormPart& part : parts) {
    if (part.name == "job") {
      if (has_job) return InvalidArgumentError("form field 'job': send one job file, got two");
      has_job = true;
      submission.set_job_text(part.content);
      submission.set_file_name(part.file_name.empty() ? "job.pbtxt" : part.file_name);
    } else if (part.name == "data") {
      if (part.file_name.empty()) {
        return InvalidArgumentError("form field 'data': a data file needs its path as its name");
      }
      proto::DataFile* file = submission.add_data_file();
      file->set_path(part.file_name);
      file->set_content(part.content);
    } else if (part.name == "steps") {
      if (part.content.empty()) continue;  // The form's empty box: the job's own steps.
      SOFTWIRE_ASSIGN_OR_RETURN(int64_t steps, ParseCount(part));
      submission.mutable_settings()->set_steps(steps);
    } else if (part.name == "devices" || part.name == "dp" || part.name == "tp" ||
               part.name == "pp") {
      if (part.content.empty()) continue;
      SOFTWIRE_ASSIGN_OR_RETURN(int64_t count, ParseCount(part));
      if (count < 1 || count > 4096) {
        return InvalidArgumentError("form field '" + part.name + "': expected 1 to 4096, got " +
                                    part.content);
      }
      proto::RunSettings* settings = submission.mutable_settings();
      const int32_t value = static_cast<int32_t>(count);
      if (part.name == "devices") settings->set_devices(value);
      if (part.name == "dp") settings->mutable_parallel()->set_data_parallel(value);
      if (part.name == "tp") settings->mutable_parallel()->set_tensor_parallel(value);
      if (part.name == "pp") settings->mutable_parallel()->set_pipeline_stages(value);
    } else if (part.name == "trace") {
      submission.mutable_settings()->set_trace(part.content == "1" || part.content == "on");
    } else if (part.name == "trace_steps") {
      if (part.content.empty()) continue;
      SOFTWIRE_ASSIGN_OR_RETURN(auto range, ParseStepRange(part));
      submission.mutable_settings()->set_trace_first_step(range.first);
      submission.mutable_settings()->set_trace_end_step(range.second);
    } else if (part.name == "idempotency_key") {
      submission.set_idempotency_key(part.content);
    } else {
      return InvalidArgumentError("unknown form field '" + part.name +
                                  "' (expected job, data, steps, devices, dp, tp, pp, trace, "
                                  "trace_steps, idempotency_key)");
    }
  }
  if (!has_job) return InvalidArgumentError("form field 'job': no job file was sent");
  return submission;
}

}  // namespace service
}  // namespace softwire
