#include "tests/runtime/testing/hosted_runs.h"

#include <gtest/gtest.h>

#include <chrono>
#include <utility>

#include "compiler/compiler.h"
#include "placement/cluster_spec.h"

namespace softwire {
namespace runtime {
namespace seams_testing {

proto::Plan CompileMlp(const std::string& cluster, int dp, int pp, int steps) {
  StatusOr<compiler::JobFile> file = compiler::ParseJobFile("tests/compiler/jobs/mlp.pbtxt");
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return proto::Plan();
  compiler::CompileOptions options;
  options.steps = steps;
  StatusOr<proto::Cluster> parsed = placement::ParseClusterShorthand(cluster, 4);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  options.cluster = *parsed;
  options.parallel.set_data_parallel(dp);
  options.parallel.set_pipeline_stages(pp);
  StatusOr<proto::Plan> plan = compiler::CompileJob(*file, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : proto::Plan();
}

LossRecorder::LossRecorder(const proto::Plan& plan) {
  for (const proto::PlanOutput& output : plan.output()) {
    if (output.is_loss()) loss_ = output.name();
  }
}

void LossRecorder::OnStep(const CollectedStep& step) {
  auto found = step.outputs.find(loss_);
  if (found != step.outputs.end()) losses.push_back(found->second);
}

std::unique_ptr<NodeRuntime> RuntimeFor(const proto::Plan& plan, const std::string& node,
                                        const KernelRegistry* kernels) {
  NodeRuntimeOptions options;
  options.kernels.cpu = kernels;
  for (const proto::PlanDevice& device : plan.device()) {
    if (!node.empty() && device.node() != node) continue;
    DeviceSpec spec;
    spec.device = device;
    options.devices.push_back(spec);
  }
  StatusOr<std::unique_ptr<NodeRuntime>> runtime = NodeRuntime::Create(std::move(options));
  EXPECT_TRUE(runtime.ok()) << runtime.status();
  return runtime.ok() ? std::move(runtime).value() : nullptr;
}

ExecutionOptions Bounded(JobEvents* events) {
  ExecutionOptions options;
  options.events = events;
  options.stall_timeout = std::chrono::seconds(20);
  return options;
}

std::vector<double> RunOnce(NodeRuntime* runtime, HostedPlan* hosted) {
  LossRecorder losses(hosted->plan());
  StatusOr<std::unique_ptr<Execution>> run = Execution::Create(runtime, hosted, Bounded(&losses));
  EXPECT_TRUE(run.ok()) << run.status();
  if (!run.ok()) return {};
  Status status = (*run)->Run();
  EXPECT_TRUE(status.ok()) << status;
  return losses.losses;
}

Status HostOnTwoNodes(const proto::Plan& plan, const KernelRegistry* kernels, actors::JobId job,
                      TwoNodeShares* shares) {
  shares->runtime0 = RuntimeFor(plan, "node0", kernels);
  shares->runtime1 = RuntimeFor(plan, "node1", kernels);
  if (shares->runtime0 == nullptr || shares->runtime1 == nullptr) {
    return InternalError("no runtime for node0 or node1");
  }
  SOFTWIRE_ASSIGN_OR_RETURN(shares->node0,
                            HostedPlan::Load(shares->runtime0.get(), plan, "node0", job));
  SOFTWIRE_ASSIGN_OR_RETURN(shares->node1,
                            HostedPlan::Load(shares->runtime1.get(), plan, "node1", job));
  SOFTWIRE_RETURN_IF_ERROR(shares->node0->Bind({shares->node1.get()}));
  return shares->node1->Bind({shares->node0.get()});
}

Status CreateConnectedRuns(ExecutionOptions options, JobEvents* events0, JobEvents* events1,
                           TwoNodeShares* shares) {
  options.events = events0;
  SOFTWIRE_ASSIGN_OR_RETURN(
      shares->run0, Execution::Create(shares->runtime0.get(), shares->node0.get(), options));
  options.events = events1;
  SOFTWIRE_ASSIGN_OR_RETURN(
      shares->run1, Execution::Create(shares->runtime1.get(), shares->node1.get(), options));
  SOFTWIRE_ASSIGN_OR_RETURN(std::vector<int64_t> node1_actors, shares->node0->ActorsOf("node1"));
  SOFTWIRE_ASSIGN_OR_RETURN(std::vector<int64_t> node0_actors, shares->node1->ActorsOf("node0"));
  shares->run0->router().ConnectPeer(node1_actors, &shares->run1->router());
  shares->run1->router().ConnectPeer(node0_actors, &shares->run0->router());
  return Status::Ok();
}

}  // namespace seams_testing
}  // namespace runtime
}  // namespace softwire
