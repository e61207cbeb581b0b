// NodeServiceImpl: the gRPC NodeService (proto/node_service.proto) over a NodeRegistry, served
// by JobServer beside the job service when the server runs jobs on node agents.
//
// JoinNode is NodeRegistry::Join. Connect holds one node's session: the node's first report
// names its session (OpenStream); a writer thread sends the session's commands, and a keepalive
// when it had nothing to say for a heartbeat period; the handler's thread reads the node's
// reports into the registry. The stream ends when the node goes (its end closed or broke: the
// registry hears Lost with that reason), when the registry drops the session (a missed
// heartbeat: the call is cancelled, so a stopped node finds its stream gone when it wakes), or
// when the service stops.
//
// Threading: gRPC's threads call it; one extra thread per Connect call. Ownership: borrows the
// registry, which outlives it.
#ifndef SOFTWIRE_SERVICE_RPC_NODE_SERVICE_H_
#define SOFTWIRE_SERVICE_RPC_NODE_SERVICE_H_

#include <atomic>
#include <string>

#include "proto/node_service.grpc.pb.h"
#include "service/node_registry.h"

namespace softwire {
namespace service {

class NodeServiceImpl final : public proto::NodeService::Service {
 public:
  // With a `token`, every call must carry it (runtime/rpc/rpc_security.h).
  NodeServiceImpl(NodeRegistry* nodes, std::string token, int32_t nodes_wanted);

  // Ends every Connect stream within a heartbeat period; called before the server shuts down.
  void Stop() { stopping_ = true; }

  grpc::Status JoinNode(grpc::ServerContext* context, const proto::JoinNodeRequest* request,
                        proto::JoinNodeResponse* response) override;
  grpc::Status Connect(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<proto::NodeCommand, proto::NodeReport>* stream) override;
  grpc::Status ListNodes(grpc::ServerContext* context, const proto::ListNodesRequest* request,
                         proto::ListNodesResponse* response) override;

 private:
  NodeRegistry* const nodes_;
  const std::string token_;
  const int32_t nodes_wanted_;
  std::atomic<bool> stopping_{false};
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_RPC_NODE_SERVICE_H_
