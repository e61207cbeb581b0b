// DiagnosticsClient: asks a running job's Diagnostics service (diagnostics_server.h), for
// `softwire diagnose ADDR`. Every call has a deadline; nothing waits longer.
//
//   StatusOr<proto::GetWaitStatesResponse> states =
//       GetWaitStates("127.0.0.1:40123", std::chrono::seconds(5));
//   if (states.ok()) std::puts(states->report().c_str());
#ifndef SOFTWIRE_RUNTIME_RPC_DIAGNOSTICS_CLIENT_H_
#define SOFTWIRE_RUNTIME_RPC_DIAGNOSTICS_CLIENT_H_

#include <chrono>
#include <string>

#include "base/status.h"
#include "proto/diagnostics.pb.h"
#include "runtime/rpc/rpc_security.h"
#include "trace/clock_offset.h"

namespace softwire {
namespace rpc {

// Which server job to ask about, and how to reach the server.
struct DiagnosticsCallOptions {
  // A job id of `softwire serve` ("job-3"); empty for a process that runs one job.
  std::string job_id;
  ClientSecurity security;
};

// The wait states of the job served at `address`. The call's deadline is `deadline`; the node
// waits for its actors' answers for a little less. Unavailable when nothing listens there,
// DeadlineExceeded when it did not answer in time, FailedPrecondition when its job is not
// running; messages name the address.
StatusOr<proto::GetWaitStatesResponse> GetWaitStates(
    const std::string& address, std::chrono::milliseconds deadline,
    const DiagnosticsCallOptions& options = DiagnosticsCallOptions());

// The offset of the served node's clock from this process's CLOCK_MONOTONIC by the minimum
// round-trip method over `probes` GetClock calls, each with `deadline`.
StatusOr<trace::ClockOffset> EstimateRemoteClockOffset(
    const std::string& address, int probes, std::chrono::milliseconds deadline,
    const ClientSecurity& security = ClientSecurity());

}  // namespace rpc
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_RPC_DIAGNOSTICS_CLIENT_H_
