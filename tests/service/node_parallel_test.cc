// A job on a 3-node local cluster (`softwire serve --nodes 3` and three `softwire node`
// processes, its shares meeting over the TCP data plane) gives the same per-step losses as
// `softwire run` in one process with the same cluster spec and parallel settings: data, tensor
// and pipeline parallel each across the nodes' single cpus, and data x pipeline parallel over
// 3 nodes of 2 cpus.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/file.h"
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

// The losses and trained variables of `job` submitted to the cluster and run in one process with
// `cluster_spec`, both with `parallel`; the submitted job's plan must span `nodes` nodes.
void ExpectLossesOfRun(const LocalCluster& cluster, const std::string& directory,
                       const std::string& job, const std::string& cluster_spec,
                       const std::string& parallel, int nodes) {
  SCOPED_TRACE(parallel);
  const std::string name = std::to_string(std::hash<std::string>()(parallel));
  const std::string run_metrics = directory + "/run-" + name + ".jsonl";
  const std::string submit_metrics = directory + "/submit-" + name + ".jsonl";
  const std::string run_variables = directory + "/run-variables-" + name;
  const std::string fetched_variables = directory + "/fetched-variables-" + name;
  CommandOutcome run =
      Softwire("run " + job + " --cluster " + cluster_spec + " --steps 6 " + parallel +
               " --metrics-out " + run_metrics + " --save " + run_variables);
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
  // The trained variables come back from the nodes, each stitched whole, bit for bit run's.
  const size_t at = submit.output.find("(job-");
  ASSERT_NE(at, std::string::npos) << submit.output;
  const std::string id = submit.output.substr(at + 1, submit.output.find(')', at) - at - 1);
  CommandOutcome fetch =
      Softwire("fetch " + id + " --to " + cluster.address() + " --save " + fetched_variables);
  ASSERT_EQ(fetch.exit_code, 0) << fetch.output;
  int compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(run_variables)) {
    const std::string file = entry.path().filename().string();
    StatusOr<std::string> expected_bytes = ReadFile(entry.path().string());
    StatusOr<std::string> fetched_bytes = ReadFile(fetched_variables + "/" + file);
    ASSERT_TRUE(expected_bytes.ok() && fetched_bytes.ok()) << file << ": " << fetch.output;
    EXPECT_TRUE(*expected_bytes == *fetched_bytes) << file << " differs from run's";
    ++compared;
  }
  EXPECT_GT(compared, 0);
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
