#include "runtime/rpc/diagnostics_server.h"

#include <grpcpp/grpcpp.h>

#include "runtime/rpc/diagnostics_service.h"
#include "runtime/rpc/rpc_status.h"

namespace softwire {
namespace rpc {

StatusOr<std::unique_ptr<DiagnosticsServer>> DiagnosticsServer::Start(const std::string& address,
                                                                      const std::string& node,
                                                                      WaitStatesSource source) {
  if (!IsLoopbackAddress(address)) {
    return InvalidArgumentError(
        "cannot listen on '" + address +
        "': diagnostics listen on loopback only (127.0.0.1:PORT, "
        "[::1]:PORT or localhost:PORT); softwire serve listens wider, with TLS "
        "and a token");
  }
  std::unique_ptr<DiagnosticsServer> server(new DiagnosticsServer());
  // One job per process: whatever job a request names, it is this one.
  server->service_ = std::make_unique<DiagnosticsService>(
      node, [source = std::move(source)](const std::string&, std::chrono::milliseconds timeout) {
        return source(timeout);
      });
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &server->port_);
  builder.RegisterService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return UnavailableError("cannot listen on '" + address + "' (is the port taken?)");
  }
  server->address_ = address.substr(0, address.rfind(':') + 1) + std::to_string(server->port_);
  return server;
}

DiagnosticsServer::~DiagnosticsServer() {
  if (server_ == nullptr) return;
  // Calls in flight get a second to finish; the job's own answers take at most their timeout.
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server_->Wait();
}

}  // namespace rpc
}  // namespace softwire
