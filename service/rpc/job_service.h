// JobServiceImpl: the gRPC JobService (proto/job_service.proto) over a JobManager, which does
// all the work; this file only checks the caller's token, converts statuses
// (runtime/rpc/rpc_status.h) and streams.
//
// Streams: WatchJob asks JobManager::WaitForEvents in short waits (kWatchPoll), so it notices
// within one wait a client that went away (ServerContext::IsCancelled) or a server that stops
// (Stop). FetchResults sends variables (read from their .npy files) and the trace in chunks of
// kResultChunkBytes, so no message nears gRPC's size limits whatever a job made.
//
// Ownership and threading: borrows the JobManager, which must outlive it; its methods run on
// gRPC's threads, any number at once (JobManager is thread-safe).
#ifndef SOFTWIRE_SERVICE_RPC_JOB_SERVICE_H_
#define SOFTWIRE_SERVICE_RPC_JOB_SERVICE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "proto/job_service.grpc.pb.h"
#include "service/job_manager.h"

namespace softwire {
namespace service {

// Bytes of one variable or trace chunk of FetchResults.
constexpr int64_t kResultChunkBytes = 1 << 20;
// How long WatchJob waits for events before it looks whether its caller is still there.
constexpr std::chrono::milliseconds kWatchPoll(200);
// Steps may complete every few milliseconds. After a burst with a step in it, WatchJob sends
// what came next at most this often, in one burst, so neither its thread nor the client wakes
// once per step on the cores the job computes on: with every step sent at once a Python watcher
// cost the MLP bench job 2.5% of its samples/s on 2 cores (BENCHMARKS.md, "Job service"). The
// first step goes out as soon as it completes.
constexpr std::chrono::milliseconds kWatchBatch(100);

class JobServiceImpl final : public proto::JobService::Service {
 public:
  // With a `token`, every call must carry it (runtime/rpc/rpc_security.h).
  JobServiceImpl(JobManager* jobs, std::string token);

  // Ends every WatchJob stream (UNAVAILABLE, "the server is stopping") within kWatchPoll +
  // kWatchBatch; what the server calls before it shuts down, so no watcher holds the shutdown up.
  void Stop() { stopping_ = true; }

  grpc::Status SubmitJob(grpc::ServerContext* context, const proto::SubmitJobRequest* request,
                         proto::SubmitJobResponse* response) override;
  grpc::Status WatchJob(grpc::ServerContext* context, const proto::WatchJobRequest* request,
                        grpc::ServerWriter<proto::WatchJobResponse>* writer) override;
  grpc::Status GetJob(grpc::ServerContext* context, const proto::GetJobRequest* request,
                      proto::GetJobResponse* response) override;
  grpc::Status ListJobs(grpc::ServerContext* context, const proto::ListJobsRequest* request,
                        proto::ListJobsResponse* response) override;
  grpc::Status CancelJob(grpc::ServerContext* context, const proto::CancelJobRequest* request,
                         proto::CancelJobResponse* response) override;
  grpc::Status FetchResults(grpc::ServerContext* context, const proto::FetchResultsRequest* request,
                            grpc::ServerWriter<proto::FetchResultsResponse>* writer) override;
  grpc::Status ListDevices(grpc::ServerContext* context, const proto::ListDevicesRequest* request,
                           proto::ListDevicesResponse* response) override;

 private:
  JobManager* const jobs_;
  const std::string token_;
  std::atomic<bool> stopping_{false};
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_RPC_JOB_SERVICE_H_
