#include "runtime/rpc/diagnostics_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>

#include "proto/diagnostics.grpc.pb.h"
#include "runtime/device/trace_clock.h"
#include "runtime/rpc/rpc_status.h"

namespace softwire {
namespace rpc {
namespace {

std::unique_ptr<proto::Diagnostics::Stub> Connect(const std::string& address,
                                                  const ClientSecurity& security) {
  return proto::Diagnostics::NewStub(CreateClientChannel(address, security));
}

void SetDeadline(grpc::ClientContext* context, std::chrono::milliseconds deadline) {
  context->set_deadline(std::chrono::system_clock::now() + deadline);
}

}  // namespace

StatusOr<proto::GetWaitStatesResponse> GetWaitStates(const std::string& address,
                                                     std::chrono::milliseconds deadline,
                                                     const DiagnosticsCallOptions& options) {
  std::unique_ptr<proto::Diagnostics::Stub> stub = Connect(address, options.security);
  grpc::ClientContext context;
  SetDeadline(&context, deadline);
  AttachToken(options.security, &context);
  proto::GetWaitStatesRequest request;
  request.set_job_id(options.job_id);
  // Leave a quarter of the deadline (at least 100 ms) for the answer to travel back.
  const auto actor_timeout = std::max<std::chrono::milliseconds>(
      deadline - std::max<std::chrono::milliseconds>(deadline / 4, std::chrono::milliseconds(100)),
      std::chrono::milliseconds(1));
  request.set_timeout_ms(static_cast<int32_t>(std::min<int64_t>(actor_timeout.count(), 60000)));
  proto::GetWaitStatesResponse response;
  grpc::Status status = stub->GetWaitStates(&context, request, &response);
  SOFTWIRE_RETURN_IF_ERROR(FromGrpcStatus(status, "GetWaitStates to " + address));
  return response;
}

StatusOr<trace::ClockOffset> EstimateRemoteClockOffset(const std::string& address, int probes,
                                                       std::chrono::milliseconds deadline,
                                                       const ClientSecurity& security) {
  std::unique_ptr<proto::Diagnostics::Stub> stub = Connect(address, security);
  return trace::EstimateClockOffset(probes, [&]() -> StatusOr<trace::ClockProbe> {
    grpc::ClientContext context;
    SetDeadline(&context, deadline);
    AttachToken(security, &context);
    proto::GetClockResponse response;
    trace::ClockProbe probe;
    probe.sent = runtime::TraceClock::MonotonicNs();
    grpc::Status status = stub->GetClock(&context, proto::GetClockRequest(), &response);
    probe.received = runtime::TraceClock::MonotonicNs();
    SOFTWIRE_RETURN_IF_ERROR(FromGrpcStatus(status, "GetClock to " + address));
    probe.remote = response.monotonic_ns();
    return probe;
  });
}

}  // namespace rpc
}  // namespace softwire
