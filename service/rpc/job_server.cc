#include "service/rpc/job_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <algorithm>
#include <chrono>
#include <climits>

#include "runtime/rpc/diagnostics_service.h"
#include "runtime/rpc/rpc_status.h"
#include "service/rpc/job_service.h"
#include "service/rpc/node_service.h"

namespace softwire {
namespace service {
namespace {

Status CheckSecurity(const JobServerOptions& options) {
  const bool tls = !options.tls_certificate.empty() && !options.tls_private_key.empty();
  if (options.tls_certificate.empty() != options.tls_private_key.empty()) {
    return InvalidArgumentError("TLS needs both a certificate and its private key");
  }
  if (!rpc::IsLoopbackAddress(options.address) && (!tls || options.token.empty())) {
    return InvalidArgumentError(
        "cannot listen on '" + options.address +
        "' without TLS and a token: an address other than loopback (127.0.0.1:PORT, [::1]:PORT, "
        "localhost:PORT) needs a certificate, its key and a token file");
  }
  return Status::Ok();
}

std::shared_ptr<grpc::ServerCredentials> CredentialsFor(const JobServerOptions& options) {
  if (options.tls_certificate.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({options.tls_private_key, options.tls_certificate});
  return grpc::SslServerCredentials(ssl);
}

}  // namespace

int JobServer::MaxReceiveBytes(const JobLimits& limits) {
  const int64_t bytes = limits.max_job_bytes + limits.max_upload_bytes + (int64_t{1} << 20);
  return static_cast<int>(std::min<int64_t>(bytes, INT_MAX));
}

StatusOr<std::unique_ptr<JobServer>> JobServer::Start(JobManager* jobs, JobServerOptions options) {
  SOFTWIRE_RETURN_IF_ERROR(CheckSecurity(options));
  std::unique_ptr<JobServer> server(new JobServer());
  server->jobs_service_ = std::make_unique<JobServiceImpl>(jobs, options.token);
  server->diagnostics_service_ = std::make_unique<rpc::DiagnosticsService>(
      options.node,
      [jobs](const std::string& job_id, std::chrono::milliseconds timeout) {
        if (job_id.empty()) {
          return StatusOr<runtime::JobWaitStates>(InvalidArgumentError(
              "this server runs several jobs: name one (softwire diagnose ADDR --job ID)"));
        }
        return jobs->DescribeWaits(job_id, timeout);
      },
      options.token);
  // Both are process-wide settings gRPC reads when a server is built.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.address, CredentialsFor(options), &server->port_);
  builder.SetMaxReceiveMessageSize(MaxReceiveBytes(jobs->options().limits));
  builder.RegisterService(server->jobs_service_.get());
  builder.RegisterService(server->diagnostics_service_.get());
  if (options.nodes != nullptr) {
    server->node_service_ =
        std::make_unique<NodeServiceImpl>(options.nodes, options.token, options.nodes_wanted);
    builder.RegisterService(server->node_service_.get());
  }
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return UnavailableError("cannot listen on '" + options.address +
                            "' (is the port taken? is the address this host's?)");
  }
  server->address_ =
      options.address.substr(0, options.address.rfind(':') + 1) + std::to_string(server->port_);
  return server;
}

JobServer::~JobServer() {
  if (server_ == nullptr) return;
  jobs_service_->Stop();
  if (node_service_ != nullptr) node_service_->Stop();
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server_->Wait();
}

}  // namespace service
}  // namespace softwire
