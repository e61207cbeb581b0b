#include "service/rpc/node_service.h"

#include <thread>

#include "runtime/rpc/rpc_security.h"
#include "runtime/rpc/rpc_status.h"

namespace softwire {
namespace service {
namespace {

using ::softwire::rpc::CheckBearerToken;
using ::softwire::rpc::ToGrpcStatus;

}  // namespace

NodeServiceImpl::NodeServiceImpl(NodeRegistry* nodes, std::string token, int32_t nodes_wanted)
    : nodes_(nodes), token_(std::move(token)), nodes_wanted_(nodes_wanted) {}

grpc::Status NodeServiceImpl::JoinNode(grpc::ServerContext* context,
                                       const proto::JoinNodeRequest* request,
                                       proto::JoinNodeResponse* response) {
  grpc::Status allowed = CheckBearerToken(*context, token_);
  if (!allowed.ok()) return allowed;
  if (stopping_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is stopping");
  StatusOr<proto::JoinNodeResponse> joined = nodes_->Join(*request);
  if (!joined.ok()) return ToGrpcStatus(joined.status());
  *response = std::move(*joined);
  return grpc::Status::OK;
}

grpc::Status NodeServiceImpl::Connect(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<proto::NodeCommand, proto::NodeReport>* stream) {
  grpc::Status allowed = CheckBearerToken(*context, token_);
  if (!allowed.ok()) return allowed;
  proto::NodeReport first;
  if (!stream->Read(&first) || !first.has_open()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "the first report on Connect must be OpenStream with the session id");
  }
  StatusOr<std::shared_ptr<NodeSession>> opened = nodes_->Open(first.open().session_id());
  if (!opened.ok()) return ToGrpcStatus(opened.status());
  std::shared_ptr<NodeSession> session = std::move(*opened);
  const std::chrono::milliseconds period = nodes_->options().heartbeat_period;

  // The writer: the session's commands, keepalives in between; it cancels the call when the
  // session closes (the node was dropped) or the service stops, which ends the reads below.
  std::thread writer([&] {
    for (;;) {
      proto::NodeCommand command;
      bool closed = false;
      const bool got = session->NextCommand(period, &command, &closed);
      if (closed || stopping_) break;
      if (!got) command.mutable_keepalive();
      if (!stream->Write(command)) break;
    }
    context->TryCancel();
  });
  proto::NodeReport report;
  std::string reason = "its stream ended";
  while (stream->Read(&report)) {
    nodes_->Deliver(session.get(), report);
  }
  if (context->IsCancelled()) reason = "its connection broke or it stopped answering";
  nodes_->Lost(session.get(), reason);
  writer.join();
  return grpc::Status::OK;
}

grpc::Status NodeServiceImpl::ListNodes(grpc::ServerContext* context,
                                        const proto::ListNodesRequest* request,
                                        proto::ListNodesResponse* response) {
  grpc::Status allowed = CheckBearerToken(*context, token_);
  if (!allowed.ok()) return allowed;
  for (proto::NodeInfo& node : nodes_->Nodes()) *response->add_node() = std::move(node);
  response->set_nodes_wanted(nodes_wanted_);
  return grpc::Status::OK;
}

}  // namespace service
}  // namespace softwire
