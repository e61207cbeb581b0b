#include "service/rpc/job_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <set>

#include "base/mutex.h"
#include "proto/diagnostics.grpc.pb.h"
#include "proto/job_service.grpc.pb.h"
#include "proto/node_service.grpc.pb.h"
#include "runtime/rpc/rpc_status.h"
#include "service/event_log.h"

namespace softwire {
namespace service {
namespace {

// Results come in chunks of 1 MiB; a long job list can be larger than gRPC's default 4 MiB.
constexpr int kMaxReceiveBytes = 256 << 20;

}  // namespace

class JobClient::Calls {
 public:
  explicit Calls(const std::shared_ptr<grpc::Channel>& channel)
      : jobs(proto::JobService::NewStub(channel)),
        diagnostics(proto::Diagnostics::NewStub(channel)),
        nodes(proto::NodeService::NewStub(channel)) {}

  // Registers a stream's context so StopWatching can cancel it; false once stopped.
  bool BeginStream(grpc::ClientContext* context) EXCLUDES(mutex_) {
    MutexLock lock(&mutex_);
    if (stopped_) return false;
    streams_.insert(context);
    return true;
  }
  void EndStream(grpc::ClientContext* context) EXCLUDES(mutex_) {
    MutexLock lock(&mutex_);
    streams_.erase(context);
  }
  void Stop() EXCLUDES(mutex_) {
    MutexLock lock(&mutex_);
    stopped_ = true;
    for (grpc::ClientContext* context : streams_) context->TryCancel();
  }
  bool stopped() EXCLUDES(mutex_) {
    MutexLock lock(&mutex_);
    return stopped_;
  }

  const std::unique_ptr<proto::JobService::Stub> jobs;
  const std::unique_ptr<proto::Diagnostics::Stub> diagnostics;
  const std::unique_ptr<proto::NodeService::Stub> nodes;

 private:
  Mutex mutex_;
  bool stopped_ GUARDED_BY(mutex_) = false;
  // The Watch and Fetch calls in progress, which Stop cancels.
  std::set<grpc::ClientContext*> streams_ GUARDED_BY(mutex_);
};

JobClient::JobClient(JobClientOptions options)
    : options_(std::move(options)),
      calls_(std::make_unique<Calls>(
          rpc::CreateClientChannel(options_.address, options_.security, kMaxReceiveBytes))) {}

JobClient::~JobClient() = default;

void JobClient::PrepareUnary(grpc::ClientContext* context) const {
  context->set_deadline(std::chrono::system_clock::now() + options_.deadline);
  rpc::AttachToken(options_.security, context);
}

StatusOr<proto::SubmitJobResponse> JobClient::Submit(const proto::JobSubmission& submission) {
  grpc::ClientContext context;
  PrepareUnary(&context);
  proto::SubmitJobRequest request;
  *request.mutable_submission() = submission;
  proto::SubmitJobResponse response;
  SOFTWIRE_RETURN_IF_ERROR(rpc::FromGrpcStatus(
      calls_->jobs->SubmitJob(&context, request, &response), "SubmitJob to " + options_.address));
  return response;
}

StatusOr<proto::JobInfo> JobClient::GetJob(const std::string& job_id) {
  grpc::ClientContext context;
  PrepareUnary(&context);
  proto::GetJobRequest request;
  request.set_job_id(job_id);
  proto::GetJobResponse response;
  SOFTWIRE_RETURN_IF_ERROR(rpc::FromGrpcStatus(calls_->jobs->GetJob(&context, request, &response),
                                               "GetJob to " + options_.address));
  return response.job();
}

StatusOr<std::vector<proto::JobInfo>> JobClient::ListJobs(
    const std::vector<proto::JobState>& states, int limit) {
  grpc::ClientContext context;
  PrepareUnary(&context);
  proto::ListJobsRequest request;
  for (proto::JobState state : states) request.add_state(state);
  request.set_limit(limit);
  proto::ListJobsResponse response;
  SOFTWIRE_RETURN_IF_ERROR(rpc::FromGrpcStatus(calls_->jobs->ListJobs(&context, request, &response),
                                               "ListJobs to " + options_.address));
  return std::vector<proto::JobInfo>(response.job().begin(), response.job().end());
}

StatusOr<proto::JobInfo> JobClient::Cancel(const std::string& job_id, const std::string& reason) {
  grpc::ClientContext context;
  PrepareUnary(&context);
  proto::CancelJobRequest request;
  request.set_job_id(job_id);
  request.set_reason(reason);
  proto::CancelJobResponse response;
  SOFTWIRE_RETURN_IF_ERROR(rpc::FromGrpcStatus(
      calls_->jobs->CancelJob(&context, request, &response), "CancelJob to " + options_.address));
  return response.job();
}

StatusOr<proto::ListDevicesResponse> JobClient::ListDevices() {
  grpc::ClientContext context;
  PrepareUnary(&context);
  proto::ListDevicesResponse response;
  SOFTWIRE_RETURN_IF_ERROR(rpc::FromGrpcStatus(
      calls_->jobs->ListDevices(&context, proto::ListDevicesRequest(), &response),
      "ListDevices to " + options_.address));
  return response;
}

StatusOr<proto::ListNodesResponse> JobClient::ListNodes() {
  grpc::ClientContext context;
  PrepareUnary(&context);
  proto::ListNodesResponse response;
  SOFTWIRE_RETURN_IF_ERROR(
      rpc::FromGrpcStatus(calls_->nodes->ListNodes(&context, proto::ListNodesRequest(), &response),
                          "ListNodes to " + options_.address));
  return response;
}

StatusOr<proto::JoinNodeResponse> JobClient::JoinNode(const proto::JoinNodeRequest& request) {
  grpc::ClientContext context;
  PrepareUnary(&context);
  proto::JoinNodeResponse response;
  SOFTWIRE_RETURN_IF_ERROR(rpc::FromGrpcStatus(
      calls_->nodes->JoinNode(&context, request, &response), "JoinNode to " + options_.address));
  return response;
}

void JobClient::StopWatching() {
  calls_->Stop();
}

Status JobClient::Watch(const std::string& job_id, int64_t from_sequence,
                        const std::function<bool(const proto::JobEvent&)>& on_event) {
  const std::string what = "WatchJob to " + options_.address;
  grpc::ClientContext context;
  rpc::AttachToken(options_.security, &context);
  if (!calls_->BeginStream(&context)) return CancelledError(what + ": stopped");
  proto::WatchJobRequest request;
  request.set_job_id(job_id);
  request.set_from_sequence(from_sequence);
  std::unique_ptr<grpc::ClientReader<proto::WatchJobResponse>> reader =
      calls_->jobs->WatchJob(&context, request);
  proto::WatchJobResponse response;
  bool ended = false;
  while (!ended && reader->Read(&response)) {
    const bool terminal = IsTerminalEvent(response.event());
    ended = !on_event(response.event()) || terminal;
  }
  if (ended) context.TryCancel();  // Leaves the rest of the stream unread.
  grpc::Status status = reader->Finish();
  calls_->EndStream(&context);
  if (ended) return Status::Ok();
  if (calls_->stopped()) return CancelledError(what + ": stopped");
  if (status.ok()) return UnavailableError(what + ": the stream ended before the job did");
  return rpc::FromGrpcStatus(status, what);
}

Status JobClient::Fetch(const proto::FetchResultsRequest& request,
                        const std::function<Status(const proto::FetchResultsResponse&)>& on_part) {
  const std::string what = "FetchResults to " + options_.address;
  grpc::ClientContext context;
  rpc::AttachToken(options_.security, &context);
  if (!calls_->BeginStream(&context)) return CancelledError(what + ": stopped");
  std::unique_ptr<grpc::ClientReader<proto::FetchResultsResponse>> reader =
      calls_->jobs->FetchResults(&context, request);
  proto::FetchResultsResponse part;
  Status failed;
  while (failed.ok() && reader->Read(&part)) failed = on_part(part);
  if (!failed.ok()) context.TryCancel();
  grpc::Status status = reader->Finish();
  calls_->EndStream(&context);
  if (!failed.ok()) return failed;
  return rpc::FromGrpcStatus(status, what);
}

StatusOr<proto::GetWaitStatesResponse> JobClient::GetWaitStates(
    const std::string& job_id, std::chrono::milliseconds deadline) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  rpc::AttachToken(options_.security, &context);
  proto::GetWaitStatesRequest request;
  request.set_job_id(job_id);
  request.set_timeout_ms(
      static_cast<int32_t>(std::clamp<int64_t>(deadline.count() * 3 / 4, 1, 60000)));
  proto::GetWaitStatesResponse response;
  SOFTWIRE_RETURN_IF_ERROR(
      rpc::FromGrpcStatus(calls_->diagnostics->GetWaitStates(&context, request, &response),
                          "GetWaitStates to " + options_.address));
  return response;
}

}  // namespace service
}  // namespace softwire
