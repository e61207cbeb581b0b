// NodeConnection: the node agent's side of the node protocol (proto/node_service.proto). It
// dials the server, joins, opens the Connect stream and serves it: commands go to the
// NodeAgent, clock probes are answered, and a heartbeat (the agent's runs and memory) goes out
// every heartbeat period. When the stream ends, breaks, or the server is silent for the
// heartbeat timeout, every run is aborted and freed (NodeAgent::AbortAll) and the node joins
// again, retrying with backoff (250 ms doubling to 2 s) until Stop.
//
//   NodeConnection connection(options, &agent);   // agent's send = connection.Send
//   std::thread stopper(...);                     // connection.Stop() on SIGTERM
//   Status status = connection.Run();             // OK after Stop
//
// Failure: Run returns the server's refusal when it refuses the node for good: another
// protocol version (FAILED_PRECONDITION, naming both), a bad node description
// (INVALID_ARGUMENT), a missing or wrong token (UNAUTHENTICATED). Anything else is retried.
//
// Threading: Run on one thread (it runs one extra writer thread per session); Send and Stop
// from any thread. Ownership: borrows the agent, which outlives Run.
#ifndef SOFTWIRE_SERVICE_RPC_NODE_CONNECTION_H_
#define SOFTWIRE_SERVICE_RPC_NODE_CONNECTION_H_

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "base/mutex.h"
#include "base/status.h"
#include "proto/nodes.pb.h"
#include "runtime/rpc/rpc_security.h"
#include "service/node_agent.h"

namespace grpc {
class ClientContext;
}  // namespace grpc

namespace softwire {
namespace service {

struct NodeConnectionOptions {
  // "HOST:PORT" of the server.
  std::string server_address;
  rpc::ClientSecurity security;
  // What the node joins with (protocol version, name, devices, data-plane address, pid).
  proto::JoinNodeRequest join;
  std::chrono::milliseconds first_retry{250};
  std::chrono::milliseconds longest_retry{2000};
  // Told each time the node joined, and each time it lost the server (for the CLI's lines).
  std::function<void(const std::string& line)> log;
};

class NodeConnection {
 public:
  NodeConnection(NodeConnectionOptions options, NodeAgent* agent);
  ~NodeConnection();
  NodeConnection(const NodeConnection&) = delete;
  NodeConnection& operator=(const NodeConnection&) = delete;

  // Joins and serves until Stop (see the file comment).
  Status Run() EXCLUDES(mutex_);
  // Ends Run: the current session ends (its runs are aborted and freed) and no join follows.
  void Stop() EXCLUDES(mutex_);
  // Queues a report for the server; dropped when no session is open.
  void Send(proto::NodeReport report) EXCLUDES(mutex_);

 private:
  class Calls;
  // One session from JoinNode's answer to the stream's end; the reason it ended.
  std::string Serve(const proto::JoinNodeResponse& joined) EXCLUDES(mutex_);
  void Log(const std::string& line) const;

  const NodeConnectionOptions options_;
  NodeAgent* const agent_;
  std::unique_ptr<Calls> calls_;
  Mutex mutex_;
  CondVar changed_;
  bool stopping_ GUARDED_BY(mutex_) = false;
  bool session_open_ GUARDED_BY(mutex_) = false;
  grpc::ClientContext* context_ GUARDED_BY(mutex_) = nullptr;  // The call in progress.
  std::deque<proto::NodeReport> outbox_ GUARDED_BY(mutex_);
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_RPC_NODE_CONNECTION_H_
