#include "service/rpc/job_service.h"

#include <algorithm>
#include <fstream>
#include <thread>
#include <vector>

#include "base/npy.h"
#include "runtime/rpc/rpc_security.h"
#include "runtime/rpc/rpc_status.h"
#include "service/event_log.h"

namespace softwire {
namespace service {
namespace {

using ::softwire::rpc::CheckBearerToken;
using ::softwire::rpc::ToGrpcStatus;

grpc::Status MissingJobId() {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "job_id is empty: name a job (job-3)");
}

// What a FetchResultsRequest asks for: all false means everything there is.
struct WantedResults {
  bool metrics = true;
  bool variables = true;
  bool trace = true;
  bool explicit_request = false;  // Something was named: missing parts are errors.
};

WantedResults WantedBy(const proto::FetchResultsRequest& request) {
  WantedResults wanted;
  if (request.metrics() || request.variables() || request.trace()) {
    wanted.metrics = request.metrics();
    wanted.variables = request.variables();
    wanted.trace = request.trace();
    wanted.explicit_request = true;
  }
  return wanted;
}

// FAILED_PRECONDITION for a part asked for by name that the job does not have.
grpc::Status CheckWantedPartsExist(const WantedResults& wanted, const StoredResults& results) {
  if (!wanted.explicit_request) return grpc::Status::OK;
  const std::string& id = results.job.job_id();
  if (wanted.variables && results.job.state() != proto::JOB_STATE_SUCCEEDED) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        id + " did not succeed: it has no trained variables");
  }
  if (wanted.trace && results.trace_path.empty()) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        id + " ran without a trace (submit it with trace on: softwire submit "
                             "--trace)");
  }
  return grpc::Status::OK;
}

int64_t FileBytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  return file ? static_cast<int64_t>(file.tellg()) : 0;
}

// Sends `size` bytes at `data` as chunks made by `make_chunk(offset, chunk)`; false when the
// client went away.
template <typename MakeChunk>
bool WriteChunks(const char* data, int64_t size,
                 grpc::ServerWriter<proto::FetchResultsResponse>* writer, MakeChunk make_chunk) {
  for (int64_t offset = 0; offset < size; offset += kResultChunkBytes) {
    const int64_t length = std::min<int64_t>(kResultChunkBytes, size - offset);
    if (!writer->Write(make_chunk(offset, std::string(data + offset, length)))) return false;
  }
  return true;
}

grpc::Status ClientGone() {
  return grpc::Status(grpc::StatusCode::CANCELLED, "the client stopped reading");
}

grpc::Status WriteVariables(const StoredResults& results,
                            grpc::ServerWriter<proto::FetchResultsResponse>* writer) {
  for (const StoredVariable& variable : results.variables) {
    StatusOr<NpyArray> array = ReadNpy(variable.npy_path);
    if (!array.ok()) {
      return ToGrpcStatus(DataLossError("variable '" + variable.name + "' of " +
                                        results.job.job_id() + ": " + array.status().message()));
    }
    const int64_t size = static_cast<int64_t>(array->data.size());
    const bool written =
        WriteChunks(array->data.data(), size, writer, [&](int64_t offset, std::string data) {
          proto::FetchResultsResponse part;
          proto::VariableChunk* chunk = part.mutable_variable();
          chunk->set_name(variable.name);
          chunk->set_offset(offset);
          chunk->set_data(std::move(data));
          return part;
        });
    if (!written) return ClientGone();
  }
  return grpc::Status::OK;
}

// The trace is read a chunk at a time: it may be far larger than any one message.
grpc::Status WriteTrace(const StoredResults& results,
                        grpc::ServerWriter<proto::FetchResultsResponse>* writer) {
  std::ifstream file(results.trace_path, std::ios::binary);
  if (!file) {
    return grpc::Status(grpc::StatusCode::DATA_LOSS,
                        "the trace of " + results.job.job_id() + " cannot be read");
  }
  std::string buffer(kResultChunkBytes, '\0');
  int64_t offset = 0;
  while (file) {
    file.read(buffer.data(), kResultChunkBytes);
    const std::streamsize got = file.gcount();
    if (got <= 0) break;
    proto::FetchResultsResponse part;
    part.mutable_trace()->set_offset(offset);
    part.mutable_trace()->set_data(buffer.data(), static_cast<size_t>(got));
    if (!writer->Write(part)) return ClientGone();
    offset += got;
  }
  return grpc::Status::OK;
}

}  // namespace

JobServiceImpl::JobServiceImpl(JobManager* jobs, std::string token)
    : jobs_(jobs), token_(std::move(token)) {}

grpc::Status JobServiceImpl::SubmitJob(grpc::ServerContext* context,
                                       const proto::SubmitJobRequest* request,
                                       proto::SubmitJobResponse* response) {
  grpc::Status allowed = CheckBearerToken(*context, token_);
  if (!allowed.ok()) return allowed;
  StatusOr<SubmittedJob> submitted = jobs_->Submit(request->submission());
  if (!submitted.ok()) return ToGrpcStatus(submitted.status());
  *response->mutable_job() = submitted->job;
  response->set_existing(submitted->existing);
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::WatchJob(grpc::ServerContext* context,
                                      const proto::WatchJobRequest* request,
                                      grpc::ServerWriter<proto::WatchJobResponse>* writer) {
  grpc::Status allowed = CheckBearerToken(*context, token_);
  if (!allowed.ok()) return allowed;
  if (request->job_id().empty()) return MissingJobId();
  if (request->from_sequence() < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "from_sequence must be >= 0");
  }
  int64_t next = std::max<int64_t>(1, request->from_sequence());
  while (true) {
    if (context->IsCancelled()) return ClientGone();
    if (stopping_) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                          "the server is stopping; watch again from event " + std::to_string(next) +
                              " once it is back");
    }
    StatusOr<std::vector<proto::JobEvent>> events =
        jobs_->WaitForEvents(request->job_id(), next, kWatchPoll);
    if (!events.ok()) return ToGrpcStatus(events.status());
    bool sent_a_step = false;
    for (size_t index = 0; index < events->size(); ++index) {
      const proto::JobEvent& event = (*events)[index];
      proto::WatchJobResponse response;
      *response.mutable_event() = event;
      if (!writer->Write(response)) return ClientGone();
      next = event.sequence() + 1;
      if (IsTerminalEvent(event)) return grpc::Status::OK;
      sent_a_step |= event.has_step();
    }
    if (sent_a_step) std::this_thread::sleep_for(kWatchBatch);
  }
}

grpc::Status JobServiceImpl::GetJob(grpc::ServerContext* context,
                                    const proto::GetJobRequest* request,
                                    proto::GetJobResponse* response) {
  grpc::Status allowed = CheckBearerToken(*context, token_);
  if (!allowed.ok()) return allowed;
  if (request->job_id().empty()) return MissingJobId();
  StatusOr<proto::JobInfo> job = jobs_->GetJob(request->job_id());
  if (!job.ok()) return ToGrpcStatus(job.status());
  *response->mutable_job() = *job;
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::ListJobs(grpc::ServerContext* context,
                                      const proto::ListJobsRequest* request,
                                      proto::ListJobsResponse* response) {
  grpc::Status allowed = CheckBearerToken(*context, token_);
  if (!allowed.ok()) return allowed;
  if (request->limit() < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "limit must be >= 0");
  }
  std::vector<proto::JobState> states;
  for (int state : request->state()) states.push_back(static_cast<proto::JobState>(state));
  for (proto::JobInfo& job : jobs_->ListJobs(states, request->limit())) {
    *response->add_job() = std::move(job);
  }
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::CancelJob(grpc::ServerContext* context,
                                       const proto::CancelJobRequest* request,
                                       proto::CancelJobResponse* response) {
  grpc::Status allowed = CheckBearerToken(*context, token_);
  if (!allowed.ok()) return allowed;
  if (request->job_id().empty()) return MissingJobId();
  const std::string reason =
      request->reason().empty() ? std::string("cancelled by a client") : request->reason();
  StatusOr<proto::JobInfo> job = jobs_->Cancel(request->job_id(), reason);
  if (!job.ok()) return ToGrpcStatus(job.status());
  *response->mutable_job() = *job;
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::FetchResults(grpc::ServerContext* context,
                                          const proto::FetchResultsRequest* request,
                                          grpc::ServerWriter<proto::FetchResultsResponse>* writer) {
  grpc::Status allowed = CheckBearerToken(*context, token_);
  if (!allowed.ok()) return allowed;
  if (request->job_id().empty()) return MissingJobId();
  StatusOr<StoredResults> results = jobs_->GetResults(request->job_id());
  if (!results.ok()) return ToGrpcStatus(results.status());
  const WantedResults wanted = WantedBy(*request);
  grpc::Status present = CheckWantedPartsExist(wanted, *results);
  if (!present.ok()) return present;
  const bool send_trace = wanted.trace && !results->trace_path.empty();

  proto::FetchResultsResponse header;
  *header.mutable_header()->mutable_job() = results->job;
  if (wanted.variables) {
    for (const StoredVariable& variable : results->variables) {
      proto::VariableInfo* info = header.mutable_header()->add_variable();
      info->set_name(variable.name);
      *info->mutable_desc() = variable.desc;
      info->set_bytes(variable.bytes);
    }
  }
  if (send_trace) header.mutable_header()->set_trace_bytes(FileBytes(results->trace_path));
  if (!writer->Write(header)) return ClientGone();
  if (wanted.metrics) {
    for (const proto::StepMetrics& step : results->steps) {
      proto::FetchResultsResponse part;
      *part.mutable_step() = step;
      if (!writer->Write(part)) return ClientGone();
    }
  }
  if (wanted.variables) {
    grpc::Status written = WriteVariables(*results, writer);
    if (!written.ok()) return written;
  }
  if (send_trace) {
    grpc::Status written = WriteTrace(*results, writer);
    if (!written.ok()) return written;
    if (!results->trace_summary.empty()) {
      proto::FetchResultsResponse part;
      part.set_trace_summary(results->trace_summary);
      if (!writer->Write(part)) return ClientGone();
    }
  }
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::ListDevices(grpc::ServerContext* context,
                                         const proto::ListDevicesRequest* request,
                                         proto::ListDevicesResponse* response) {
  grpc::Status allowed = CheckBearerToken(*context, token_);
  if (!allowed.ok()) return allowed;
  for (proto::DeviceInfo& device : jobs_->ListDevices())
    *response->add_device() = std::move(device);
  response->set_queued_jobs(jobs_->QueuedJobs());
  return grpc::Status::OK;
}

}  // namespace service
}  // namespace softwire
