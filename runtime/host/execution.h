// Execution: one run of a HostedPlan, from spawned actors to the last one's exit. It owns what
// changes every run: the CAF actors (one HostActor per hosted actor), the PeerRouter their
// messages go through, the monitor and step collector, the trace, and the stall watchdog.
// Steps, the start and stalls go out through JobEvents.
//
//   StatusOr<std::unique_ptr<Execution>> run = Execution::Create(runtime, hosted, options);
//   (*run)->router().ConnectPeer(node1_actors, &node1_run->router());   // shares of one plan
//   Status status = (*run)->Run();
//
// Run starts the actors and waits on the calling thread until one of:
//   - every hosted actor finished: OK;
//   - an actor failed (protocol violation, kernel error): every actor is stopped; the error
//     names the actor;
//   - no actor completed a firing for `stall_timeout` and none has one in flight: the watchdog
//     asks every unfinished actor what it waits for, tells JobEvents::OnStall, stops them all,
//     and fails with that report.
// In every case every actor of this run has exited, and every launch it queued has been
// reported, when Run returns; other runs of the same runtime go on. While Run runs, another thread
// may ask what every actor waits for (DescribeWaits) or stop the run (Cancel). A traced run hands
// over its trace after Run.
//
// Threading: Create, Run and TakeTrace on one thread (JobEvents are called on it);
// DescribeWaits and Cancel from any thread. Ownership: borrows the runtime, the hosted plan and
// the events, which outlive it. At most one execution of a hosted plan exists at a time.
#ifndef SOFTWIRE_RUNTIME_HOST_EXECUTION_H_
#define SOFTWIRE_RUNTIME_HOST_EXECUTION_H_

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "runtime/host/checkpoint_recorder.h"
#include "runtime/host/hosted_plan.h"
#include "runtime/host/job_events.h"
#include "runtime/host/job_monitor.h"
#include "runtime/host/job_trace.h"
#include "runtime/host/node_runtime.h"
#include "runtime/host/peer_router.h"
#include "runtime/host/stall_report.h"
#include "runtime/host/step_collector.h"

namespace softwire {
namespace runtime {

struct ExecutionOptions {
  // No firing completed, and none in flight, for this long -> fail with a stall report.
  // <= 0 disables.
  std::chrono::steady_clock::duration stall_timeout = std::chrono::seconds(60);
  // Told about the start, every step and a stall. May be null.
  JobEvents* events = nullptr;
  // Whether and what to trace.
  TraceOptions trace;
  // Checkpoints taken while the run goes on (checkpoint_recorder.h); every == 0: none. A save
  // that fails fails a run that otherwise completed.
  CheckpointOptions checkpoint;
};

class Execution {
 public:
  // Spawns the hosted plan's actors (not started yet). FailedPrecondition when the hosted plan
  // is not bound or a run of it failed.
  static StatusOr<std::unique_ptr<Execution>> Create(NodeRuntime* runtime, HostedPlan* hosted,
                                                     ExecutionOptions options);
  ~Execution();
  Execution(const Execution&) = delete;
  Execution& operator=(const Execution&) = delete;

  // Where this run's actors send; connect the peers (other nodes' runs) before Run.
  PeerRouter& router() { return *router_; }
  // Runs to the end (see the file comment). Call at most once.
  Status Run();

  std::chrono::steady_clock::time_point started_at() const { return started_at_; }
  // Firings completed by the hosted actors together in this run.
  int64_t completed_firings() const;
  // What every unfinished actor waits for (Job::DescribeWaits' contract). Thread-safe.
  StatusOr<JobWaitStates> DescribeWaits(std::chrono::milliseconds timeout);
  // Stops the run: Run returns Cancelled with `reason`. Thread-safe; no effect once it ended.
  void Cancel(const std::string& reason);
  // After Run, for a traced run: its trace, with how the run ended.
  std::optional<trace::TraceLog> TakeTrace();

 private:
  Execution(NodeRuntime* runtime, HostedPlan* hosted, ExecutionOptions options);

  Status WaitForEnd();
  void ReportSteps();
  Status DescribeStall(std::chrono::duration<double> idle);
  JobWaitStates CollectWaitStates(std::chrono::steady_clock::duration timeout);
  void StopActors();
  bool AnyFiringInFlight() const;
  // Blocks until every spawned actor has exited.
  void AwaitActorsExited();
  // Raises the stop flag and has the devices complete this run's queued launches now.
  void CancelLaunches();
  // Blocks until every launch the queues deferred has been reported: nothing of this run reads
  // the hosted plan's bindings any more (it may be destroyed, or run again).
  void AwaitDeferredLaunches();

  NodeRuntime* const runtime_;
  HostedPlan* const hosted_;
  const ExecutionOptions options_;
  std::unique_ptr<JobMonitor> monitor_;
  std::unique_ptr<StepCollector> collector_;
  std::unique_ptr<PeerRouter> router_;
  std::unique_ptr<JobTrace> trace_;                  // Null when the run is not traced.
  std::unique_ptr<CheckpointRecorder> checkpoints_;  // Null when the run takes none.
  struct ExitLatch;
  std::shared_ptr<ExitLatch> exits_;  // Shared with the actors' exit hooks, which may outlive us.
  std::chrono::steady_clock::time_point started_at_;
  int64_t reported_steps_ = 0;
  bool ran_ = false;
  Status run_status_;
  Mutex running_mutex_;
  bool running_ GUARDED_BY(running_mutex_) = false;  // Actors live and started.
  bool ended_ GUARDED_BY(running_mutex_) = false;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_EXECUTION_H_
