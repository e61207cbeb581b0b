// A job on a 3-node local cluster (`softwire serve --nodes 3` and three `softwire node`
// processes, its shares meeting over the TCP data plane) gives the same per-step losses as
// `softwire run` in one process with the same cluster spec and parallel settings: data, tensor
// and pipeline parallel each across the nodes' single cpus, and data x pipeline parallel over
// 3 nodes of 2 cpus.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "cli/testing/softwire_process.h"
#include "tests/service/local_cluster.h"
#include "tests/service/serve_process.h"

namespace softwire {
namespace {

using cli_testing::Contains;
using service_testing::CommandOutcome;
using service_testing::LocalCluster;
using service_testing::TestDirectory;

CommandOutcome Softwire(const std::string& args) {
  return service_testing::RunSoftwire(SOFTWIRE_BINARY, args);
}

// The losses of `job` submitted to the cluster and run in one process with `cluster_spec`,
// both with `parallel`; the submitted job's plan must span `nodes` nodes.
void ExpectLossesOfRun(const LocalCluster& cluster, const std::string& directory,
                       const std::string& job, const std::string& cluster_spec,
                       const std::string& parallel, int nodes) {
  SCOPED_TRACE(parallel);
  const std::string name = std::to_string(std::hash<std::string>()(parallel));
  const std::string run_metrics = directory + "/run-" + name + ".jsonl";
  const std::string submit_metrics = directory + "/submit-" + name + ".jsonl";
  CommandOutcome run = Softwire("run " + job + " --cluster " + cluster_spec + " --steps 6 " +
                                parallel + " --metrics-out " + run_metrics);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  CommandOutcome submit = Softwire("submit " + job + " --to " + cluster.address() + " --steps 6 " +
                                   parallel + " --metrics-out " + submit_metrics);
  ASSERT_EQ(submit.exit_code, 0) << submit.output << cluster.Output();
  for (int node = 0; node < nodes; ++node) {
    EXPECT_TRUE(Contains(submit.output, "node" + std::to_string(node) + "/cpu:0"))
        << "the plan spans node" << node << ": " << submit.output;
  }
  const std::vector<std::string> expected = service_testing::MetricsLosses(run_metrics);
  ASSERT_EQ(expected.size(), 6u);
  EXPECT_EQ(service_testing::MetricsLosses(submit_metrics), expected);
}

TEST(NodeParallelTest, DataTensorAndPipelineParallelJobsOnThreeNodesGiveTheLossesOfRun) {
  const std::string directory = TestDirectory("node_parallel");
  LocalCluster cluster(SOFTWIRE_BINARY, directory, 3, "1cpu");
  ASSERT_TRUE(cluster.Start()) << cluster.Output();
  const std::string job = service_testing::WriteNpyTinyJob(directory);
  ExpectLossesOfRun(cluster, directory, job, "3x1cpu", "--dp 2", 2);
  ExpectLossesOfRun(cluster, directory, job, "3x1cpu", "--tp 2", 2);
  ExpectLossesOfRun(cluster, directory, job, "3x1cpu", "--pp 3", 3);
}

TEST(NodeParallelTest, AMixedDataAndPipelineParallelJobOnThreeNodesGivesTheLossesOfRun) {
  const std::string directory = TestDirectory("node_parallel_mixed");
  LocalCluster cluster(SOFTWIRE_BINARY, directory, 3, "2cpu");
  ASSERT_TRUE(cluster.Start()) << cluster.Output();
  const std::string job = service_testing::WriteNpyTinyJob(directory);
  ExpectLossesOfRun(cluster, directory, job, "3x2cpu", "--dp 2 --pp 3", 3);
}

}  // namespace
}  // namespace softwire
