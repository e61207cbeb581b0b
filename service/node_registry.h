// NodeRegistry: the node agents that joined a job server (`softwire node --join ADDR`), their
// devices, heartbeats and clock offsets, and the one queue of commands to each. Transport-free:
// the gRPC NodeService (service/rpc/node_service.h) turns a JoinNode call into Join and a
// Connect stream into Open, Deliver, NextCommand and Lost; the job side (JobManager,
// ClusterExecution) sends commands with Send and hears a run's reports through a RunListener.
//
//   NodeRegistry nodes(options);
//   StatusOr<proto::JoinNodeResponse> joined = nodes.Join(request);     // JoinNode
//   StatusOr<std::shared_ptr<NodeSession>> session = nodes.Open(id);   // Connect's first report
//   nodes.Deliver(session.get(), report);  ...  nodes.Lost(session.get(), "it disconnected");
//
// A node is live from Join until Lost: its stream ended, it never opened one, or it was silent
// (no report of any kind) for heartbeat_timeout. Then every run listener hears OnNodeLost
// (runs that use the node fail), the membership listener is told, and its session's command
// queue closes (the transport ends the stream). A node that joins again under the same name
// replaces its lost session. Clock probes go out on every live session (eight 100 ms apart
// after the join, then one every 5 s); the probe with the shortest round trip gives the offset.
//
// Threading: every method is thread-safe. Listeners are called without the registry's lock
// held, from the transport's threads or the registry's watchdog thread; they must not block for
// long. Ownership: listeners are borrowed and unsubscribed before they go.
#ifndef SOFTWIRE_SERVICE_NODE_REGISTRY_H_
#define SOFTWIRE_SERVICE_NODE_REGISTRY_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "proto/cluster.pb.h"
#include "proto/nodes.pb.h"

namespace softwire {
namespace service {

// The node protocol version this build speaks (JoinNodeRequest.protocol_version). 2: traced
// shares (HostShare.trace) and their TraceChunks. 3: checkpoints of shares (checkpoint parts,
// CheckpointShareSent) and resumed shares (HostShare.resume_step, resume_part).
constexpr int32_t kNodeProtocolVersion = 3;

struct NodeRegistryOptions {
  // How often nodes send heartbeats (told to them in JoinNodeResponse).
  std::chrono::milliseconds heartbeat_period{500};
  // Silence for this long: the node is lost.
  std::chrono::milliseconds heartbeat_timeout{2500};
  // The version nodes must speak; tests change it.
  int32_t protocol_version = kNodeProtocolVersion;
};

// One joined node's end of the server: its command queue. Thread-safe.
class NodeSession {
 public:
  const std::string& node() const { return node_; }
  const std::string& session_id() const { return session_id_; }
  // The next command for the node: waits up to `timeout`; nullopt-like false when none came.
  // `closed` is set once the session is lost and its queue is empty: the stream should end.
  bool NextCommand(std::chrono::milliseconds timeout, proto::NodeCommand* command, bool* closed)
      EXCLUDES(mutex_);

 private:
  friend class NodeRegistry;
  NodeSession(std::string node, std::string session_id)
      : node_(std::move(node)), session_id_(std::move(session_id)) {}
  void Push(proto::NodeCommand command) EXCLUDES(mutex_);
  void Close() EXCLUDES(mutex_);

  const std::string node_;
  const std::string session_id_;
  Mutex mutex_;
  CondVar changed_;
  std::deque<proto::NodeCommand> queue_ GUARDED_BY(mutex_);
  bool closed_ GUARDED_BY(mutex_) = false;
};

class NodeRegistry {
 public:
  // Hears about one run's reports and the loss of any node. Called without the registry's lock.
  class RunListener {
   public:
    virtual ~RunListener() = default;
    virtual void OnReport(const std::string& node, const proto::NodeReport& report) = 0;
    virtual void OnNodeLost(const std::string& node, const std::string& reason) = 0;
  };

  explicit NodeRegistry(NodeRegistryOptions options = {});
  // Closes every session and stops the watchdog.
  ~NodeRegistry();
  NodeRegistry(const NodeRegistry&) = delete;
  NodeRegistry& operator=(const NodeRegistry&) = delete;

  // Transport side (service/node_service.proto's contract for the errors).
  StatusOr<proto::JoinNodeResponse> Join(const proto::JoinNodeRequest& request) EXCLUDES(mutex_);
  // The node's stream opened with `session_id`: NotFound for a session that is unknown or lost.
  StatusOr<std::shared_ptr<NodeSession>> Open(const std::string& session_id) EXCLUDES(mutex_);
  // A report from the node's stream (any report counts as a heartbeat).
  void Deliver(NodeSession* session, const proto::NodeReport& report) EXCLUDES(mutex_);
  // The node's stream ended (`reason`: why, for the failed jobs' messages).
  void Lost(NodeSession* session, const std::string& reason) EXCLUDES(mutex_);

  // Job side. Queues `command` for `node`: Unavailable when the node is not live.
  Status Send(const std::string& node, proto::NodeCommand command) EXCLUDES(mutex_);
  // Reports about run `run_id` go to `listener`, and every node loss.
  void Subscribe(int64_t run_id, RunListener* listener) EXCLUDES(mutex_);
  // Returns once no call to the listener is in progress or will come.
  void Unsubscribe(int64_t run_id) EXCLUDES(mutex_);
  // Told (no arguments) after a node joined or was lost. Returns once no call to the previous
  // listener is in progress (set null before the listener goes).
  void SetMembershipListener(std::function<void()> listener) EXCLUDES(mutex_);
  // A run id no run of this registry had (1, 2, ...).
  int64_t NewRunId() EXCLUDES(mutex_);

  // The live nodes as a cluster, in the order of their names; each node's devices as it joined.
  proto::Cluster LiveCluster() const EXCLUDES(mutex_);
  // Every node that ever joined (live or lost: as it last joined), in the order of their names.
  proto::Cluster KnownCluster() const EXCLUDES(mutex_);
  int LiveNodes() const EXCLUDES(mutex_);
  // The live nodes, join order.
  std::vector<proto::NodeInfo> Nodes() const EXCLUDES(mutex_);
  // The node's data-plane address; empty when unknown or it has none.
  std::string DataPlaneAddress(const std::string& node) const EXCLUDES(mutex_);
  // Bytes allocated on `device` by the node's shares, from its last heartbeat.
  int64_t AllocatedBytes(const std::string& node, const std::string& device) const EXCLUDES(mutex_);
  // Whether `node` is live now.
  bool IsLive(const std::string& node) const EXCLUDES(mutex_);

  const NodeRegistryOptions& options() const { return options_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Node;

  Node* FindLocked(const std::string& node) REQUIRES(mutex_);
  const Node* FindLocked(const std::string& node) const REQUIRES(mutex_);
  // Marks the node lost; false when it was not live (or the session is not its current one).
  bool MarkLostLocked(Node* node, const std::string& session_id) REQUIRES(mutex_);
  void NotifyLost(const std::string& node, const std::string& reason) EXCLUDES(mutex_);
  void NotifyMembership() EXCLUDES(mutex_);
  void RecordProbeLocked(Node* node, const proto::ClockProbeReply& reply) REQUIRES(mutex_);
  void Watch() EXCLUDES(mutex_);

  const NodeRegistryOptions options_;
  mutable Mutex mutex_;
  CondVar changed_;
  std::vector<std::unique_ptr<Node>> nodes_ GUARDED_BY(mutex_);  // Join order.
  std::map<int64_t, RunListener*> listeners_ GUARDED_BY(mutex_);
  std::map<int64_t, int64_t> calls_in_progress_ GUARDED_BY(mutex_);  // By run id.
  int64_t membership_calls_ GUARDED_BY(mutex_) = 0;
  std::function<void()> membership_ GUARDED_BY(mutex_);
  int64_t last_run_id_ GUARDED_BY(mutex_) = 0;
  int64_t last_session_ GUARDED_BY(mutex_) = 0;
  int64_t last_probe_ GUARDED_BY(mutex_) = 0;
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread watchdog_;
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_NODE_REGISTRY_H_
