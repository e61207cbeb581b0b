// Faults of a local cluster (`softwire serve --nodes N` and N `softwire node` processes):
//   - a node killed with SIGKILL mid-job: the job fails within 5 s naming the node; the server
//     runs the next job on the nodes left while a job needing more waits; the node restarted
//     joins again and the waiting job starts;
//   - a node stopped with SIGSTOP mid-job: missed heartbeats fail the job within 5 s naming the
//     node; woken, it joins again;
//   - the server killed mid-job: the node aborts and frees the job within 5 s and keeps trying;
//     a new server on the same address gets it back, and every process stops cleanly.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "cli/testing/softwire_process.h"
#include "service/rpc/job_client.h"
#include "tests/service/local_cluster.h"
#include "tests/service/serve_process.h"

namespace softwire {
namespace {

using cli_testing::Contains;
using service_testing::ClientFor;
using service_testing::LocalCluster;
using service_testing::TestDirectory;
using Clock = std::chrono::steady_clock;

// Steps enough that the tiny job runs for minutes unless stopped.
constexpr int64_t kEndlessSteps = 50000000;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The measured delay, in the test's output (docs/NODES.md quotes it).
void Report(const char* what, double seconds) {
  std::printf("measured: %s %.2f s\n", what, seconds);
}

// Submits the endless tiny job and waits until it runs; its id and the node it runs on.
struct RunningJob {
  std::string id;
  std::string node;
};
RunningJob StartEndlessJob(service::JobClient* client) {
  StatusOr<proto::SubmitJobResponse> submitted =
      client->Submit(service_testing::TinySubmission(kEndlessSteps));
  EXPECT_TRUE(submitted.ok()) << submitted.status();
  if (!submitted.ok()) return {};
  RunningJob job{submitted->job().job_id(), ""};
  // Running, and some steps done: the node hosts its share and runs it.
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < give_up) {
    StatusOr<proto::JobInfo> info = client->GetJob(job.id);
    if (info.ok() && info->completed_steps() > 10) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  StatusOr<proto::ListDevicesResponse> devices = client->ListDevices();
  EXPECT_TRUE(devices.ok()) << devices.status();
  if (devices.ok()) {
    for (const proto::DeviceInfo& device : devices->device()) {
      if (device.job_id() == job.id) job.node = device.node();
    }
  }
  EXPECT_FALSE(job.node.empty()) << "job " << job.id << " runs on no node";
  return job;
}

int NodeIndex(const std::string& node) {
  return std::stoi(node.substr(4));  // "node2" -> 2
}

// Polls until the job ended; its info then (or as it was at the deadline).
proto::JobInfo WaitForEnd(service::JobClient* client, const std::string& id, double seconds) {
  return service_testing::WaitForState(client, id, proto::JOB_STATE_SUCCEEDED, seconds);
}

TEST(NodeFaultsTest, ANodeKilledMidJobFailsItNamingTheNodeAndTheOthersRunTheNextJobs) {
  LocalCluster cluster(SOFTWIRE_BINARY, TestDirectory("node_sigkill"), 3);
  ASSERT_TRUE(cluster.Start()) << cluster.Output();
  service::JobClient client(ClientFor(cluster.address()));
  const RunningJob running = StartEndlessJob(&client);
  ASSERT_FALSE(running.node.empty()) << cluster.Output();

  const int victim = NodeIndex(running.node);
  const Clock::time_point killed_at = Clock::now();
  kill(cluster.node(victim)->pid(), SIGKILL);
  const proto::JobInfo failed = WaitForEnd(&client, running.id, 10);
  const double seconds = SecondsSince(killed_at);
  Report("one-node job failed after SIGKILL in", seconds);
  EXPECT_EQ(failed.state(), proto::JOB_STATE_FAILED) << failed.DebugString();
  EXPECT_LT(seconds, 5.0) << "the job failed " << seconds << " s after the kill";
  EXPECT_TRUE(Contains(failed.error(), "node '" + running.node + "'")) << failed.error();
  std::vector<std::string> left;
  for (int i = 0; i < cluster.size(); ++i) {
    if (i != victim) left.push_back(cluster.NodeName(i));
  }
  ASSERT_TRUE(cluster.WaitForNodes(left, 5)) << cluster.Output();

  // A job of three pipeline stages needs three devices: it waits while two nodes are live...
  proto::JobSubmission three_stages = service_testing::TinySubmission(4);
  three_stages.mutable_settings()->mutable_parallel()->set_pipeline_stages(3);
  StatusOr<proto::SubmitJobResponse> waiting = client.Submit(three_stages);
  ASSERT_TRUE(waiting.ok()) << waiting.status();
  // ...while a job of one device runs on the nodes left, from start to end.
  StatusOr<proto::SubmitJobResponse> next = client.Submit(service_testing::TinySubmission(4));
  ASSERT_TRUE(next.ok()) << next.status();
  const proto::JobInfo done = WaitForEnd(&client, next->job().job_id(), 30);
  EXPECT_EQ(done.state(), proto::JOB_STATE_SUCCEEDED) << done.DebugString() << cluster.Output();
  StatusOr<proto::JobInfo> still = client.GetJob(waiting->job().job_id());
  ASSERT_TRUE(still.ok()) << still.status();
  EXPECT_EQ(still->state(), proto::JOB_STATE_QUEUED) << still->DebugString();
  // No device holds memory of the failed job any more.
  StatusOr<proto::ListDevicesResponse> devices = client.ListDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  for (const proto::DeviceInfo& device : devices->device()) {
    EXPECT_NE(device.job_id(), running.id) << device.DebugString();
    EXPECT_EQ(device.allocated_bytes(), 0) << device.DebugString();
  }

  // The node restarted joins again, and the waiting job gets its three devices.
  cluster.StartNode(victim);
  ASSERT_TRUE(cluster.WaitForNodes({"node0", "node1", "node2"}, 15)) << cluster.Output();
  const proto::JobInfo started =
      service_testing::WaitForState(&client, waiting->job().job_id(), proto::JOB_STATE_RUNNING, 15);
  EXPECT_NE(started.state(), proto::JOB_STATE_QUEUED) << started.DebugString();
}

TEST(NodeFaultsTest, ANodeKilledMidJobOfThreeNodesFailsItAndTheOtherNodesFreeTheirShares) {
  LocalCluster cluster(SOFTWIRE_BINARY, TestDirectory("node_sigkill_shares"), 3);
  ASSERT_TRUE(cluster.Start()) << cluster.Output();
  service::JobClient client(ClientFor(cluster.address()));
  proto::JobSubmission pipelined = service_testing::TinySubmission(kEndlessSteps);
  pipelined.mutable_settings()->mutable_parallel()->set_pipeline_stages(3);
  StatusOr<proto::SubmitJobResponse> submitted = client.Submit(pipelined);
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  const std::string id = submitted->job().job_id();
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < give_up) {
    StatusOr<proto::JobInfo> info = client.GetJob(id);
    if (info.ok() && info->completed_steps() > 10) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Every node hosts a share and holds its memory.
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // A heartbeat from each.
  StatusOr<proto::ListNodesResponse> hosting = client.ListNodes();
  ASSERT_TRUE(hosting.ok()) << hosting.status();
  for (const proto::NodeInfo& node : hosting->node()) {
    EXPECT_EQ(node.run_id_size(), 1) << node.DebugString() << cluster.Output();
  }
  const Clock::time_point killed_at = Clock::now();
  kill(cluster.node(1)->pid(), SIGKILL);
  const proto::JobInfo failed = WaitForEnd(&client, id, 10);
  const double seconds = SecondsSince(killed_at);
  Report("three-node job failed after SIGKILL in", seconds);
  EXPECT_EQ(failed.state(), proto::JOB_STATE_FAILED) << failed.DebugString();
  EXPECT_LT(seconds, 5.0) << "the job failed " << seconds << " s after the kill";
  EXPECT_TRUE(Contains(failed.error(), "node 'node1' was lost")) << failed.error();
  // The other two freed their shares: no runs, no memory of the job.
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  StatusOr<proto::ListNodesResponse> left = client.ListNodes();
  ASSERT_TRUE(left.ok()) << left.status();
  ASSERT_EQ(left->node_size(), 2);
  for (const proto::NodeInfo& node : left->node()) {
    EXPECT_EQ(node.run_id_size(), 0) << node.DebugString() << cluster.Output();
  }
  StatusOr<proto::ListDevicesResponse> devices = client.ListDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  for (const proto::DeviceInfo& device : devices->device()) {
    EXPECT_TRUE(device.job_id().empty()) << device.DebugString();
  }
}

TEST(NodeFaultsTest, ANodeStoppedMidJobIsFoundByItsMissedHeartbeatsAndJoinsAgainWhenWoken) {
  LocalCluster cluster(SOFTWIRE_BINARY, TestDirectory("node_sigstop"), 2);
  ASSERT_TRUE(cluster.Start()) << cluster.Output();
  service::JobClient client(ClientFor(cluster.address()));
  const RunningJob running = StartEndlessJob(&client);
  ASSERT_FALSE(running.node.empty()) << cluster.Output();
  const int victim = NodeIndex(running.node);
  const Clock::time_point stopped_at = Clock::now();
  kill(cluster.node(victim)->pid(), SIGSTOP);
  const proto::JobInfo failed = WaitForEnd(&client, running.id, 10);
  const double seconds = SecondsSince(stopped_at);
  kill(cluster.node(victim)->pid(), SIGCONT);
  Report("job failed after SIGSTOP in", seconds);
  EXPECT_EQ(failed.state(), proto::JOB_STATE_FAILED) << failed.DebugString();
  EXPECT_LT(seconds, 5.0) << "the job failed " << seconds << " s after SIGSTOP";
  EXPECT_TRUE(Contains(failed.error(), "node '" + running.node + "'")) << failed.error();
  EXPECT_TRUE(Contains(failed.error(), "no heartbeat")) << failed.error();
  // Woken, it finds its session gone, frees the job and joins again.
  ASSERT_TRUE(cluster.WaitForNodes({"node0", "node1"}, 15)) << cluster.Output();
  EXPECT_TRUE(cluster.node(victim)->WaitFor("every job was aborted and freed", 5))
      << cluster.Output();
  std::this_thread::sleep_for(std::chrono::seconds(1));  // A heartbeat from each.
  StatusOr<proto::ListNodesResponse> nodes = client.ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  for (const proto::NodeInfo& node : nodes->node()) {
    EXPECT_EQ(node.run_id_size(), 0) << "no node hosts a run any more: " << node.DebugString();
  }
  StatusOr<proto::SubmitJobResponse> next = client.Submit(service_testing::TinySubmission(4));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(WaitForEnd(&client, next->job().job_id(), 30).state(), proto::JOB_STATE_SUCCEEDED)
      << cluster.Output();
}

TEST(NodeFaultsTest, NodesOfAServerKilledMidJobAbortWithinFiveSecondsAndJoinTheNextServer) {
  LocalCluster cluster(SOFTWIRE_BINARY, TestDirectory("node_server_kill"), 2);
  ASSERT_TRUE(cluster.Start()) << cluster.Output();
  {
    service::JobClient client(ClientFor(cluster.address()));
    const RunningJob running = StartEndlessJob(&client);
    ASSERT_FALSE(running.node.empty()) << cluster.Output();
    const int host = NodeIndex(running.node);
    const Clock::time_point killed_at = Clock::now();
    cluster.server()->Stop(SIGKILL);
    EXPECT_TRUE(cluster.node(host)->WaitFor("every job was aborted and freed", 5))
        << cluster.Output();
    Report("node aborted its job after the server's SIGKILL in", SecondsSince(killed_at));
    EXPECT_LT(SecondsSince(killed_at), 5.0);
  }
  // Both nodes live on, trying to join; a server on the same address and state gets them back,
  // and marks the job that was running failed.
  for (int i = 0; i < cluster.size(); ++i) EXPECT_TRUE(cluster.node(i)->Running());
  ASSERT_TRUE(cluster.RestartServer()) << cluster.Output();
  ASSERT_TRUE(cluster.WaitForNodes({"node0", "node1"}, 15)) << cluster.Output();
  service::JobClient client(ClientFor(cluster.address()));
  StatusOr<std::vector<proto::JobInfo>> jobs = client.ListJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ(jobs->front().state(), proto::JOB_STATE_FAILED);
  StatusOr<proto::SubmitJobResponse> next = client.Submit(service_testing::TinySubmission(4));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(WaitForEnd(&client, next->job().job_id(), 30).state(), proto::JOB_STATE_SUCCEEDED)
      << cluster.Output();
  // Nothing hangs: SIGTERM stops the nodes and the server cleanly.
  for (int i = 0; i < cluster.size(); ++i) {
    EXPECT_EQ(cluster.node(i)->Finish(SIGTERM, 10), 0) << cluster.Output();
  }
  const int status = cluster.server()->Stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cluster.Output();
}

}  // namespace
}  // namespace softwire
