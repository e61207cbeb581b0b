// DiagnosticsServer: serves the gRPC Diagnostics service (proto/diagnostics.proto) of a job
// running in this process, for `softwire run --listen ADDR`.
//
// The service (diagnostics_service.h) is transport-free on the job's side: it asks a
// WaitStatesSource (in practice runtime::LoadedPlan::DescribeWaits) and answers with the same
// report the stall watchdog and SIGUSR1 print, whatever job id a request names. It listens on
// loopback only and authenticates nobody; `softwire serve` (service/rpc/job_server.h) registers
// the same service in its own server, with TLS and a token.
//
//   StatusOr<std::unique_ptr<DiagnosticsServer>> server = DiagnosticsServer::Start(
//       "127.0.0.1:0", "node0", [&](std::chrono::milliseconds timeout) {
//         return loaded->DescribeWaits(timeout);
//       });
//   std::fprintf(stderr, "listening on %s\n", (*server)->address().c_str());
//   ... run ...; the destructor stops serving (waiting at most a second for calls in flight).
//
// Threading: the source is called on gRPC's threads, any number at once; it must be
// thread-safe (LoadedPlan::DescribeWaits is).
#ifndef SOFTWIRE_RUNTIME_RPC_DIAGNOSTICS_SERVER_H_
#define SOFTWIRE_RUNTIME_RPC_DIAGNOSTICS_SERVER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "runtime/host/stall_report.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace softwire {
namespace rpc {

using WaitStatesSource =
    std::function<StatusOr<runtime::JobWaitStates>(std::chrono::milliseconds timeout)>;

class DiagnosticsService;

class DiagnosticsServer {
 public:
  // Listens on `address` ("127.0.0.1:PORT"; port 0 picks a free one). InvalidArgument for an
  // address that is not loopback; Unavailable when it cannot listen there.
  static StatusOr<std::unique_ptr<DiagnosticsServer>> Start(const std::string& address,
                                                            const std::string& node,
                                                            WaitStatesSource source);
  ~DiagnosticsServer();
  DiagnosticsServer(const DiagnosticsServer&) = delete;
  DiagnosticsServer& operator=(const DiagnosticsServer&) = delete;

  // "127.0.0.1:40123": the address with the port actually bound.
  const std::string& address() const { return address_; }
  int port() const { return port_; }

 private:
  DiagnosticsServer() = default;

  std::unique_ptr<DiagnosticsService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  int port_ = 0;
};

}  // namespace rpc
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_RPC_DIAGNOSTICS_SERVER_H_
