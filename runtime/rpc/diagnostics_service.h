// DiagnosticsService: the gRPC Diagnostics service (proto/diagnostics.proto) over a
// transport-free source of wait states. DiagnosticsServer serves it alone for the one job of
// `softwire run --listen`; `softwire serve` registers it in its own server beside the job
// service (service/rpc/job_server.h), answering for the job a request names.
//
//   DiagnosticsService diagnostics("node0", [&](const std::string& job_id, auto timeout) {
//     return jobs->DescribeWaits(job_id, timeout);
//   }, token);
//   builder.RegisterService(&diagnostics);  // Outlives the grpc::Server built from `builder`.
//
// Threading: the source is called on gRPC's threads, any number at once; it must be
// thread-safe (LoadedPlan::DescribeWaits and JobManager::DescribeWaits are).
#ifndef SOFTWIRE_RUNTIME_RPC_DIAGNOSTICS_SERVICE_H_
#define SOFTWIRE_RUNTIME_RPC_DIAGNOSTICS_SERVICE_H_

#include <chrono>
#include <functional>
#include <string>

#include "base/status.h"
#include "proto/diagnostics.grpc.pb.h"
#include "runtime/host/stall_report.h"

namespace softwire {
namespace rpc {

// The wait states of the job `job_id` names (GetWaitStatesRequest.job_id; empty on a process
// that runs one job), each actor answering within `timeout`.
using JobWaitStatesSource = std::function<StatusOr<runtime::JobWaitStates>(
    const std::string& job_id, std::chrono::milliseconds timeout)>;

class DiagnosticsService final : public proto::Diagnostics::Service {
 public:
  // `node` is the name GetClock answers with. With a `token`, every call must carry it
  // (rpc_security.h), else UNAUTHENTICATED.
  DiagnosticsService(std::string node, JobWaitStatesSource source, std::string token = "");

  grpc::Status GetWaitStates(grpc::ServerContext* context,
                             const proto::GetWaitStatesRequest* request,
                             proto::GetWaitStatesResponse* response) override;
  grpc::Status GetClock(grpc::ServerContext* context, const proto::GetClockRequest* request,
                        proto::GetClockResponse* response) override;

 private:
  const std::string node_;
  const JobWaitStatesSource source_;
  const std::string token_;
};

}  // namespace rpc
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_RPC_DIAGNOSTICS_SERVICE_H_
