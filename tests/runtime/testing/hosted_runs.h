// What the runtime's seam tests (runtime_seams_test, send_overlap_test) share: the example MLP
// compiled for a cluster, a NodeRuntime for some of a plan's devices, a loss recorder, one
// bounded run of a hosted plan, and one plan hosted as two nodes' shares whose runs meet only
// through their PeerRouters.
//
//   TwoNodeShares shares;
//   ASSERT_TRUE(HostOnTwoNodes(plan, &kernels, /*job=*/7, &shares).ok());
//   LossRecorder losses0(plan), losses1(plan);
//   ASSERT_TRUE(CreateConnectedRuns(Bounded(nullptr), &losses0, &losses1, &shares).ok());
//   std::thread node1([&] { status1 = shares.run1->Run(); });
//   Status status0 = shares.run0->Run();
//
// Failures of the helpers that return values fail the calling test (EXPECT) and return an empty
// value (no plan, a null runtime, no losses) that the caller's own checks stop at.
#ifndef SOFTWIRE_TESTS_RUNTIME_TESTING_HOSTED_RUNS_H_
#define SOFTWIRE_TESTS_RUNTIME_TESTING_HOSTED_RUNS_H_

#include <memory>
#include <string>
#include <vector>

#include "proto/plan.pb.h"
#include "runtime/host/execution.h"
#include "runtime/host/hosted_plan.h"
#include "runtime/host/job_events.h"
#include "runtime/host/node_runtime.h"

namespace softwire {
namespace runtime {
namespace seams_testing {

// tests/compiler/jobs/mlp.pbtxt compiled for `steps` steps on the cluster `cluster` (a
// shorthand such as "2x2cpu", on a 4-core machine) with data_parallel `dp` and `pp` pipeline
// stages.
proto::Plan CompileMlp(const std::string& cluster, int dp, int pp, int steps);

// Records the loss of every step a run reports, in step order.
class LossRecorder final : public JobEvents {
 public:
  explicit LossRecorder(const proto::Plan& plan);
  void OnStep(const CollectedStep& step) override;

  std::vector<double> losses;

 private:
  std::string loss_;
};

// A runtime hosting the plan's devices on `node` (every device when empty), running cpu kernels
// from `kernels` (not owned; must outlive the runtime).
std::unique_ptr<NodeRuntime> RuntimeFor(const proto::Plan& plan, const std::string& node,
                                        const KernelRegistry* kernels);

// Run options with `events` (may be null) and a 20 s stall timeout, so a hung run fails.
ExecutionOptions Bounded(JobEvents* events);

// Runs `hosted` once on `runtime` (Bounded) and returns its per-step losses.
std::vector<double> RunOnce(NodeRuntime* runtime, HostedPlan* hosted);

// A plan of nodes node0 and node1 hosted as two shares, each on a NodeRuntime of its own, as
// two processes would host it; the runs once created. Members are destroyed runs first, then
// shares, then runtimes. A test may reset any of them, in that order.
struct TwoNodeShares {
  std::unique_ptr<NodeRuntime> runtime0;
  std::unique_ptr<NodeRuntime> runtime1;
  std::unique_ptr<HostedPlan> node0;
  std::unique_ptr<HostedPlan> node1;
  std::unique_ptr<Execution> run0;
  std::unique_ptr<Execution> run1;
};

// Makes both runtimes, loads node0's and node1's shares of `plan` under `job` and binds them to
// each other. The first failure, naming the node.
Status HostOnTwoNodes(const proto::Plan& plan, const KernelRegistry* kernels, actors::JobId job,
                      TwoNodeShares* shares);

// Creates both runs (node0's reporting to `events0`, node1's to `events1`, either may be null,
// the other options as `options`) and connects each run's router to the other's. The first
// failure, naming the node.
Status CreateConnectedRuns(ExecutionOptions options, JobEvents* events0, JobEvents* events1,
                           TwoNodeShares* shares);

}  // namespace seams_testing
}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_TESTS_RUNTIME_TESTING_HOSTED_RUNS_H_
