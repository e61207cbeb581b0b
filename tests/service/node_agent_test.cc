// Node agents joining a real `softwire serve --nodes N`: the protocol version check, the node
// and device lists, clock offsets, waiting for N nodes, and a job run on a node giving the
// losses `softwire run` gives (its data read from the server's job folder).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "base/file.h"
#include "cli/testing/softwire_process.h"
#include "service/node_registry.h"
#include "service/rpc/job_client.h"
#include "tests/service/local_cluster.h"
#include "tests/service/serve_process.h"

namespace softwire {
namespace {

using cli_testing::Contains;
using service_testing::ClientFor;
using service_testing::CommandOutcome;
using service_testing::LocalCluster;
using service_testing::TestDirectory;

CommandOutcome Softwire(const std::string& args) {
  return service_testing::RunSoftwire(SOFTWIRE_BINARY, args);
}

TEST(NodeAgentTest, ANodeOfAnotherProtocolVersionIsRefusedWithBothVersionsNamed) {
  LocalCluster cluster(SOFTWIRE_BINARY, TestDirectory("node_version"), 1);
  ASSERT_TRUE(cluster.Start()) << cluster.Output();
  service::JobClient client(ClientFor(cluster.address()));
  proto::JoinNodeRequest request;
  request.set_protocol_version(service::kNodeProtocolVersion + 98);
  request.mutable_node()->set_name("old");
  proto::DeviceSpec* device = request.mutable_node()->add_device();
  device->set_name("cpu:0");
  device->set_kind(proto::DEVICE_KIND_CPU);
  StatusOr<proto::JoinNodeResponse> joined = client.JoinNode(request);
  ASSERT_FALSE(joined.ok());
  EXPECT_EQ(joined.status().code(), StatusCode::kFailedPrecondition) << joined.status();
  const std::string theirs = "version " + std::to_string(service::kNodeProtocolVersion + 98);
  const std::string ours = "version " + std::to_string(service::kNodeProtocolVersion);
  EXPECT_TRUE(Contains(joined.status().message(), theirs)) << joined.status();
  EXPECT_TRUE(Contains(joined.status().message(), ours + ";")) << joined.status();
  // Nothing joined; the right version and a fresh name do.
  EXPECT_EQ(cluster.LiveNodes(), std::vector<std::string>{"node0"});
  request.set_protocol_version(service::kNodeProtocolVersion);
  EXPECT_TRUE(client.JoinNode(request).ok());
  // A name joined and alive is refused, naming it.
  request.mutable_node()->set_name("node0");
  StatusOr<proto::JoinNodeResponse> twice = client.JoinNode(request);
  ASSERT_FALSE(twice.ok());
  EXPECT_TRUE(Contains(twice.status().message(), "'node0' has joined already")) << twice.status();
}

TEST(NodeAgentTest, JoinedNodesAreListedWithTheirDevicesAndClockOffsets) {
  LocalCluster cluster(SOFTWIRE_BINARY, TestDirectory("node_list"), 2);
  ASSERT_TRUE(cluster.Start()) << cluster.Output();
  service::JobClient client(ClientFor(cluster.address()));
  // Eight probes go out 100 ms apart after a join.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  StatusOr<proto::ListNodesResponse> nodes = client.ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(nodes->nodes_wanted(), 2);
  ASSERT_EQ(nodes->node_size(), 2);
  for (const proto::NodeInfo& node : nodes->node()) {
    ASSERT_EQ(node.node().device_size(), 1) << node.DebugString();
    EXPECT_EQ(node.node().device(0).name(), "cpu:0");
    EXPECT_EQ(node.protocol_version(), service::kNodeProtocolVersion);
    EXPECT_GT(node.pid(), 0);
    EXPECT_LT(node.heartbeat_age_seconds(), 1.5);
    EXPECT_GE(node.clock_probes(), 3) << node.DebugString();
    // One host, one steady clock: the offset is within the round trip's bound.
    EXPECT_LT(std::abs(node.clock_offset_seconds()), 0.05) << node.DebugString();
    EXPECT_GT(node.clock_round_trip_seconds(), 0);
  }
  StatusOr<proto::ListDevicesResponse> devices = client.ListDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  std::vector<std::string> names;
  for (const proto::DeviceInfo& device : devices->device()) {
    names.push_back(device.device());
    EXPECT_EQ(device.device(), device.node() + "/cpu:0");
    EXPECT_TRUE(device.available());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"node0/cpu:0", "node1/cpu:0"}));
  CommandOutcome listed = Softwire("jobs --devices --to " + cluster.address());
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_TRUE(Contains(listed.output, "node1/cpu:0")) << listed.output;
  // Stopped with SIGTERM, a node leaves cleanly and the server drops it.
  EXPECT_EQ(cluster.node(1)->Finish(SIGTERM, 10), 0) << cluster.Output();
  EXPECT_TRUE(cluster.WaitForNodes({"node0"}, 5)) << cluster.Output();
}

TEST(NodeAgentTest, SubmissionsWaitForTheNodesThenAJobOnANodeGivesTheLossesOfRun) {
  const std::string directory = TestDirectory("node_losses");
  LocalCluster cluster(SOFTWIRE_BINARY, directory, 2);
  ASSERT_TRUE(cluster.Start()) << cluster.Output();
  // With one of its two nodes gone, the server runs jobs on the node that is left.
  ASSERT_EQ(cluster.node(1)->Finish(SIGKILL, 10), -1);
  ASSERT_TRUE(cluster.WaitForNodes({"node0"}, 5)) << cluster.Output();
  const std::string job = service_testing::WriteNpyTinyJob(directory);
  const std::string run_metrics = directory + "/run.jsonl";
  const std::string submit_metrics = directory + "/submit.jsonl";
  CommandOutcome run =
      Softwire("run " + job + " --cluster 1cpu --steps 8 --metrics-out " + run_metrics);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  CommandOutcome submit = Softwire("submit " + job + " --to " + cluster.address() +
                                   " --steps 8 --metrics-out " + submit_metrics);
  ASSERT_EQ(submit.exit_code, 0) << submit.output << cluster.Output();
  EXPECT_TRUE(Contains(submit.output, "on node0/cpu:0")) << submit.output;
  const std::vector<std::string> run_losses = service_testing::MetricsLosses(run_metrics);
  ASSERT_EQ(run_losses.size(), 8u);
  EXPECT_EQ(service_testing::MetricsLosses(submit_metrics), run_losses);
  // The node's clock offset is kept with the job's results, for its traces.
  StatusOr<std::string> clocks = ReadFile(directory + "/state/jobs/job-1/results/nodes.json");
  ASSERT_TRUE(clocks.ok()) << clocks.status();
  EXPECT_TRUE(Contains(*clocks, "\"node0\": {\"clock_offset_seconds\": ")) << *clocks;
}

TEST(NodeAgentTest, AServerWaitsForItsNodesBeforeItTakesJobs) {
  const std::string directory = TestDirectory("node_wait");
  LocalCluster cluster(SOFTWIRE_BINARY, directory, 2);
  ASSERT_TRUE(cluster.Start()) << cluster.Output();
  // A server of three nodes on the same port, with two of them: it waits for the third.
  cluster.server()->Stop(SIGKILL);
  service_testing::ServeProcess three(
      SOFTWIRE_BINARY, {"--listen", cluster.address(), "--nodes", "3"}, directory + "/state3");
  ASSERT_TRUE(three.Start()) << three.Output();
  ASSERT_TRUE(cluster.WaitForNodes({"node0", "node1"}, 10)) << cluster.Output();
  service::JobClient client(ClientFor(cluster.address()));
  StatusOr<proto::SubmitJobResponse> refused = client.Submit(service_testing::TinySubmission(2));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable) << refused.status();
  EXPECT_TRUE(Contains(refused.status().message(), "waits for 3 nodes")) << refused.status();
  EXPECT_TRUE(Contains(refused.status().message(), "2 joined")) << refused.status();
}

}  // namespace
}  // namespace softwire
