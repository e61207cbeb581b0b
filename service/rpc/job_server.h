// JobServer: the gRPC server of `softwire serve`. It serves, on one address, the job service
// (job_service.h), the node service when node agents run the jobs (node_service.h), and the
// Diagnostics service for served jobs (GetWaitStatesRequest.job_id ->
// JobManager::DescribeWaits), both over one JobManager, plus the standard health service
// (grpc.health.v1.Health) and server reflection, which need no token.
//
//   JobServerOptions options;
//   options.address = "127.0.0.1:0";  // Port 0: a free one.
//   StatusOr<std::unique_ptr<JobServer>> server = JobServer::Start(jobs.get(), options);
//   std::printf("listening on %s\n", (*server)->address().c_str());
//   ... until a signal ...; server->reset();  // Then the JobManager may go.
//
// Security: plaintext on loopback addresses only. Any other address needs TLS (a certificate
// and its key) and a token; Start refuses it otherwise. With a token, every call of the job
// and Diagnostics services must carry "authorization: Bearer TOKEN" (runtime/rpc/
// rpc_security.h), else UNAUTHENTICATED.
//
// Size limits: the largest message it accepts is the JobManager's limits on a job graph and its
// uploads together, plus room for the rest of the request (MaxReceiveBytes).
//
// Ownership and threading: borrows the JobManager, which must outlive it. Calls run on gRPC's
// threads. The destructor ends watch streams, gives calls in flight two seconds, and returns
// once every call has ended.
#ifndef SOFTWIRE_SERVICE_RPC_JOB_SERVER_H_
#define SOFTWIRE_SERVICE_RPC_JOB_SERVER_H_

#include <memory>
#include <string>

#include "base/status.h"
#include "service/job_manager.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace softwire {
namespace rpc {
class DiagnosticsService;
}  // namespace rpc

namespace service {

class JobServiceImpl;
class NodeServiceImpl;

struct JobServerOptions {
  // "HOST:PORT"; port 0 picks a free port.
  std::string address = "127.0.0.1:7070";
  // PEM certificate chain and private key: TLS on when both are set (one alone is an error).
  std::string tls_certificate;
  std::string tls_private_key;
  // The token every job and Diagnostics call must carry; empty: none (loopback only).
  std::string token;
  // The name GetClock answers with.
  std::string node = "node0";
  // Node agents join through the NodeService (proto/node_service.proto), served when this is
  // set; borrowed, outlives the server. `nodes_wanted` is what ListNodes reports.
  NodeRegistry* nodes = nullptr;
  int32_t nodes_wanted = 0;
};

class JobServer {
 public:
  // Listens on `options.address`. InvalidArgument for a non-loopback address without TLS and a
  // token, or half a TLS setting; Unavailable when it cannot listen there (the port is taken,
  // the certificate is not one).
  static StatusOr<std::unique_ptr<JobServer>> Start(JobManager* jobs, JobServerOptions options);
  ~JobServer();
  JobServer(const JobServer&) = delete;
  JobServer& operator=(const JobServer&) = delete;

  // "127.0.0.1:40123": the address with the port actually bound.
  const std::string& address() const { return address_; }
  int port() const { return port_; }

  // The largest request the server takes for `limits`: a job graph and its uploads at their
  // limits, plus 1 MiB for everything else; at most 2 GiB - 1 (gRPC's bound).
  static int MaxReceiveBytes(const JobLimits& limits);

 private:
  JobServer() = default;

  std::unique_ptr<JobServiceImpl> jobs_service_;
  std::unique_ptr<rpc::DiagnosticsService> diagnostics_service_;
  std::unique_ptr<NodeServiceImpl> node_service_;  // Null without node agents.
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  int port_ = 0;
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_RPC_JOB_SERVER_H_
