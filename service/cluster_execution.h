// ClusterExecution: one served job's run on joined node agents (docs/NODES.md). The plan is on
// the nodes' devices; every node of the plan hosts its share (HostShare), then every node is
// attached to its peers' data planes (AttachPeers), then every node starts (StartRun). The
// values the nodes' sinks report come back as SinkValues and go through one StepCollector and
// StepTimer over the whole plan, so the job's step events read exactly as a run on the server's
// own devices reports them (same losses, same events; the seconds are the server's clock).
// The run ends when every node reported RunEnded; then every node releases the share.
//
// Checkpoints (RunSettings.checkpoint_every): each node's share sends its parts at every
// checkpoint step while it runs, and a CheckpointGatherer writes each step once every node
// holding trained parts sent its share: results/checkpoints/, a CheckpointWritten event each,
// as a job in one process (docs/CHECKPOINTS.md). A resumed run (JobRunSpec::resume) sends the
// state to every node after hosting, before attaching; its steps number on from the state's.
// JobOutcome::lost_node names the node whose loss failed it (JobManager may restart the job).
//
//   ClusterExecution run(&registry, std::move(spec), &listener);
//   JobOutcome outcome = run.Run();          // on the job's own thread
//
// Failure: a node that reports an error fails the job with "node 'NAME': ERROR"; a node that is
// lost (its stream ended, or silent for the heartbeat timeout) fails it with "node 'NAME' was
// lost: REASON" at once (and also when another node's error came first, by up to 0.5 s: a
// killed node's peers report their broken data plane before the server hears of the loss); in both
// cases every other node is told to release the share (its actors stop, its memory is freed) and
// Run returns within the release timeout. A node that does not answer a command within the command
// timeout fails the job naming it.
//
// Results: metrics.jsonl as a local run writes it, nodes.json with each node's clock offset
// from the server's (NTP-style, the probe with the shortest round trip), and for a traced job
// trace.json (with its summary and SVG): the nodes' traces, sent in TraceChunks before their
// RunEnded, merged onto the server's time axis by those offsets (service/node_traces.h). Not
// yet: live diagnosis of the nodes' actors (DescribeWaits answers FailedPrecondition).
//
// Threading: Run on one thread; Cancel, DescribeWaits and AllocatedBytes from any thread; the
// registry calls OnReport and OnNodeLost from its threads. Ownership: borrows the registry and
// the listener.
#ifndef SOFTWIRE_SERVICE_CLUSTER_EXECUTION_H_
#define SOFTWIRE_SERVICE_CLUSTER_EXECUTION_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "service/checkpoint_parts.h"
#include "service/job_run.h"
#include "service/node_registry.h"
#include "service/node_traces.h"
#include "service/variable_parts.h"

namespace softwire {
namespace service {

struct ClusterExecutionOptions {
  // How long a node may take to host its share, attach, or start.
  std::chrono::milliseconds command_timeout{60000};
  // How long Run waits for the nodes to free a share at the end. Short, so a failed job is
  // recorded within seconds; a node still freeing the share when the next job comes waits for
  // its devices before hosting (NodeAgent).
  std::chrono::milliseconds release_timeout{1500};
};

class ClusterExecution final : public JobRun, private NodeRegistry::RunListener {
 public:
  ClusterExecution(NodeRegistry* nodes, JobRunSpec spec, JobExecutionListener* listener,
                   ClusterExecutionOptions options = {});
  ~ClusterExecution() override;
  ClusterExecution(const ClusterExecution&) = delete;
  ClusterExecution& operator=(const ClusterExecution&) = delete;

  JobOutcome Run() override EXCLUDES(mutex_);
  void Cancel(const std::string& reason) override EXCLUDES(mutex_);
  StatusOr<runtime::JobWaitStates> DescribeWaits(std::chrono::milliseconds timeout) override;
  int64_t AllocatedBytes(const std::string& device) const override;

 private:
  using Clock = std::chrono::steady_clock;
  class Steps;

  // RunListener.
  void OnReport(const std::string& node, const proto::NodeReport& report) override EXCLUDES(mutex_);
  void OnNodeLost(const std::string& node, const std::string& reason) override EXCLUDES(mutex_);

  // Sends `command` to every node of the plan and waits for each one's ack of `name`: the first
  // error (a node's, a lost node, a cancel, the timeout) otherwise.
  Status CommandAll(const std::string& name, const proto::NodeCommand& command) EXCLUDES(mutex_);
  // A resumed run: the state, whole, to every node of the plan as resume_part commands (after
  // their host acks, before attach).
  Status SendResumeState() EXCLUDES(mutex_);
  // Waits until every node ended its run, feeding the step values to `steps` as they come.
  Status AwaitRunEnd(Steps* steps) EXCLUDES(mutex_);
  // Tells every live node to release the share and waits for their acks (bounded).
  void ReleaseAll(const std::string& reason) EXCLUDES(mutex_);
  // {"node0": {"clock_offset_seconds": ..., "clock_round_trip_seconds": ..., "clock_probes": N},
  // ...} for the plan's live nodes: results/nodes.json.
  std::string NodeClocksJson() const;
  // results/trace.json and its summary and SVG from the nodes' traces (a traced job).
  Status WriteTrace() EXCLUDES(mutex_);
  // The job's failure so far (a lost node, a node's error, a cancel); OK while none.
  Status FailureLocked() const REQUIRES(mutex_);
  // A node's error is often the echo of another node's loss (its data plane broke): waits a
  // moment for news of a lost node, whose name then leads the failure.
  void PreferLostNodeLocked(MutexLock* lock) REQUIRES(mutex_);

  NodeRegistry* const nodes_;
  const JobRunSpec spec_;
  JobExecutionListener* const listener_;
  const ClusterExecutionOptions options_;
  const int64_t run_id_;
  std::vector<std::string> plan_nodes_;  // The nodes of the plan, in plan order.
  // The nodes' checkpoint parts stitched and written; null when the job takes none.
  std::unique_ptr<CheckpointGatherer> checkpoints_;

  mutable Mutex mutex_;
  CondVar changed_;
  std::map<std::string, int64_t> acks_ GUARDED_BY(mutex_);       // "node\ncommand" -> count.
  std::map<std::string, std::string> ended_ GUARDED_BY(mutex_);  // Node -> error ("" ok).
  std::deque<proto::SinkValue> values_ GUARDED_BY(mutex_);
  GatheredVariables variables_ GUARDED_BY(mutex_);  // The nodes' trained variable parts.
  std::set<std::string> checkpoint_senders_ GUARDED_BY(mutex_);  // Attach acks that said so.
  NodeTraceAssembler traces_ GUARDED_BY(mutex_);
  Status failure_ GUARDED_BY(mutex_);
  bool failure_from_report_ GUARDED_BY(mutex_) = false;  // A node's error, not a lost node.
  bool cancelled_ GUARDED_BY(mutex_) = false;
  std::string cancel_reason_ GUARDED_BY(mutex_);
  std::vector<std::string> lost_ GUARDED_BY(mutex_);
  std::string lost_reason_ GUARDED_BY(mutex_);  // Of the first lost node.
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_CLUSTER_EXECUTION_H_
