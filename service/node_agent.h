// NodeAgent: what `softwire node` does with the server's commands, without the transport. It
// hosts each job share it is sent on its NodeRuntime, attaches it to the other nodes' data
// planes, runs it, reports the values of its sinks and how the run ended, and frees the share
// (actors, memory, devices) when told to, or when the server goes away (AbortAll).
//
//   NodeAgentOptions options;
//   options.runtime = runtime.get();          // the node's devices
//   options.data_plane = data_plane.get();    // may be null: shares that use no other node only
//   options.send = [&](proto::NodeReport report) { outbox.Push(std::move(report)); };
//   NodeAgent agent(std::move(options));
//   agent.Handle(command);                    // for every command the server sends
//   agent.AbortAll("the server went away");   // the stream broke
//
// Each run (HostShare.run_id) has a thread of its own that takes its commands in order: host
// (HostedPlan::Load with the run id as job id, then Bind; devices that a released run still
// frees are waited for up to 10 s), attach (Execution::Create, the sinks'
// values routed to `send`, DataPlane::Attach when the plan has other nodes), start (acked, then
// Execution::Run; when it returns, a traced share's trace in TraceChunks (service/node_traces.h),
// then RunEnded), release (the run is cancelled if it still runs,
// then the attachment, the execution and the hosted plan are destroyed, then acked). Every
// command is answered with a CommandAck naming the command, with the error when it failed.
//
// A share of a job that takes checkpoints (HostShare.checkpoint_every) takes them as a run in one
// process does, but sends each one's parts to the server (service/checkpoint_parts.h) instead
// of writing files; a resumed share (HostShare.resume_step) gathers the resume_part commands
// that follow its HostShare and restores that state when it attaches.
//
// Threading: every method is thread-safe; `send` is called from the runs' threads and from
// Handle's caller, and must not block. Ownership: borrows the runtime and the data plane,
// which outlive the agent; the destructor aborts every run.
#ifndef SOFTWIRE_SERVICE_NODE_AGENT_H_
#define SOFTWIRE_SERVICE_NODE_AGENT_H_

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "base/mutex.h"
#include "proto/nodes.pb.h"
#include "runtime/host/node_runtime.h"
#include "runtime/net/data_plane.h"

namespace softwire {
namespace service {

struct NodeAgentOptions {
  runtime::NodeRuntime* runtime = nullptr;
  runtime::net::DataPlane* data_plane = nullptr;
  // Where reports go.
  std::function<void(proto::NodeReport)> send;
};

class NodeAgent {
 public:
  explicit NodeAgent(NodeAgentOptions options);
  ~NodeAgent();
  NodeAgent(const NodeAgent&) = delete;
  NodeAgent& operator=(const NodeAgent&) = delete;

  // Takes one command (host, attach, start, release); clock probes and keepalives are the
  // transport's. Quick: the work happens on the run's thread.
  void Handle(const proto::NodeCommand& command) EXCLUDES(mutex_);
  // Cancels and frees every run; returns once all are freed.
  void AbortAll(const std::string& reason) EXCLUDES(mutex_);
  // The runs hosted now and the bytes their shares hold per device.
  proto::NodeHeartbeat Heartbeat() const EXCLUDES(mutex_);

 private:
  class HostedRun;
  // Joins the threads of runs that were released.
  void ReapLocked() REQUIRES(mutex_);

  const NodeAgentOptions options_;
  mutable Mutex mutex_;
  std::map<int64_t, std::unique_ptr<HostedRun>> runs_ GUARDED_BY(mutex_);
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_NODE_AGENT_H_
