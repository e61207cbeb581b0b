// Checkpoints and restarts of jobs on a local cluster (`softwire serve --nodes N` and N
// `softwire node` processes; docs/NODES.md, "Restarts"):
//   - a job on several nodes takes checkpoints: the nodes' parts stitched are, file for file,
//     the checkpoint `softwire run` takes of the same job and layout, and `softwire run
//     --resume` continues one to the job's own losses;
//   - a node SIGKILLed (or SIGSTOPped: missed heartbeats) mid-job with restarts on: the job
//     finishes, its feed shows the restart (the node, the checkpoint, the new layout), its
//     steps number on from the checkpoint, and its losses are an unbroken run's, bit for bit
//     (the layout is the same: dp 2 over two 1-cpu nodes, before and after);
//   - a restart waits for a node to join when too few are live, and a job out of restarts fails
//     naming the node.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/file.h"
#include "cli/testing/softwire_process.h"
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
using Clock = std::chrono::steady_clock;

CommandOutcome Softwire(const std::string& args) {
  return service_testing::RunSoftwire(SOFTWIRE_BINARY, args);
}

// The tiny job with adam, so that checkpoints hold optimizer state (m and v).
std::string WithAdam(std::string job) {
  const std::string sgd = "sgd { learning_rate: 0.1 }";
  job.replace(job.find(sgd), sgd.size(), "adam { learning_rate: 0.05 }");
  return job;
}

// The npy tiny job with adam, written into `directory`; its path.
std::string WriteAdamNpyJob(const std::string& directory) {
  const std::string path = service_testing::WriteNpyTinyJob(directory);
  StatusOr<std::string> text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << path;
  EXPECT_TRUE(WriteFileAtomically(path, WithAdam(text.ok() ? *text : "")).ok());
  return path;
}

// The job's id in `softwire submit`'s output ("... (job-3) ...").
std::string JobIdIn(const std::string& output) {
  const size_t at = output.find("(job-");
  if (at == std::string::npos) return "";
  return output.substr(at + 1, output.find(')', at) - at - 1);
}

std::string ResultsOf(const std::string& directory, const std::string& job_id) {
  return directory + "/state/jobs/" + job_id + "/results";
}

// Watches the job's events from number `from` until `wanted` says yes or `seconds` pass; every
// event seen. (A client of its own: StopWatching ends every later watch of a client.)
std::vector<proto::JobEvent> EventsUntil(const std::string& address, const std::string& job_id,
                                         int64_t from,
                                         const std::function<bool(const proto::JobEvent&)>& wanted,
                                         double seconds) {
  service::JobClient client(ClientFor(address));
  std::vector<proto::JobEvent> events;
  std::atomic<bool> done{false};
  std::thread watchdog([&] {
    const Clock::time_point give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                         std::chrono::duration<double>(seconds));
    while (!done && Clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!done) client.StopWatching();
  });
  Status watched = client.Watch(job_id, from, [&](const proto::JobEvent& event) {
    events.push_back(event);
    return !wanted(event);
  });
  done = true;
  watchdog.join();
  return events;
}

bool Has(const std::vector<proto::JobEvent>& events,
         const std::function<bool(const proto::JobEvent&)>& wanted) {
  for (const proto::JobEvent& event : events) {
    if (wanted(event)) return true;
  }
  return false;
}

// Polls until the job completed more than `steps` steps (or ended); its info then.
proto::JobInfo WaitForSteps(service::JobClient* client, const std::string& id, int64_t steps,
                            double seconds) {
  const Clock::time_point give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                       std::chrono::duration<double>(seconds));
  proto::JobInfo info;
  while (Clock::now() < give_up) {
    StatusOr<proto::JobInfo> got = client->GetJob(id);
    if (got.ok()) info = *got;
    if (got.ok() && (got->completed_steps() > steps || got->state() >= proto::JOB_STATE_SUCCEEDED))
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return info;
}

// Every file of `expected` (a checkpoint folder) is in `actual`, byte for byte.
void ExpectSameCheckpoint(const std::string& expected, const std::string& actual) {
  int compared = 0;
  for (const char* folder : {"variables", "optimizer"}) {
    for (const auto& entry : std::filesystem::directory_iterator(expected + "/" + folder)) {
      const std::string file = std::string(folder) + "/" + entry.path().filename().string();
      StatusOr<std::string> want = ReadFile(entry.path().string());
      StatusOr<std::string> got = ReadFile(actual + "/" + file);
      ASSERT_TRUE(want.ok()) << file;
      ASSERT_TRUE(got.ok()) << actual << " lacks " << file;
      EXPECT_TRUE(*want == *got) << file << " differs from run's checkpoint";
      ++compared;
    }
  }
  EXPECT_EQ(compared, 2) << "w, and adam's m and v of w";
}

void ExpectCheckpointsOfRun(const LocalCluster& cluster, const std::string& directory,
                            const std::string& job, const std::string& parallel) {
  SCOPED_TRACE(parallel);
  const std::string name = std::to_string(std::hash<std::string>()(parallel));
  const std::string submit_metrics = directory + "/submit-" + name + ".jsonl";
  const std::string run_metrics = directory + "/run-" + name + ".jsonl";
  const std::string resumed_metrics = directory + "/resumed-" + name + ".jsonl";
  const std::string run_checkpoints = directory + "/run-checkpoints-" + name;
  CommandOutcome submit =
      Softwire("submit " + job + " --to " + cluster.address() + " --steps 8 " + parallel +
               " --checkpoint-every 3 --metrics-out " + submit_metrics);
  ASSERT_EQ(submit.exit_code, 0) << submit.output << cluster.Output();
  EXPECT_TRUE(Contains(submit.output, "checkpoint after step 6: checkpoints/step-00000006"))
      << submit.output;
  const std::string served = ResultsOf(directory, JobIdIn(submit.output)) + "/checkpoints";
  CommandOutcome run = Softwire("run " + job + " --cluster 3x1cpu --steps 8 " + parallel +
                                " --checkpoint-every 3 --checkpoint-dir " + run_checkpoints +
                                " --metrics-out " + run_metrics);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(service_testing::MetricsLosses(submit_metrics),
            service_testing::MetricsLosses(run_metrics));
  ExpectSameCheckpoint(run_checkpoints + "/step-00000006", served + "/step-00000006");
  // (Step 3's is written unless step 6's was whole before the disk took it: with 8 steps in a
  // few milliseconds on a loaded host, either may happen, in the run as on the server.)

  // `run --resume` of the served checkpoint: steps 6 and 7, with the job's losses.
  CommandOutcome resumed = Softwire("run " + job + " --cluster 3x1cpu --steps 8 " + parallel +
                                    " --resume " + served + " --metrics-out " + resumed_metrics);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_TRUE(Contains(resumed.output, "resuming from step 6")) << resumed.output;
  const std::vector<std::string> all = service_testing::MetricsLosses(submit_metrics);
  ASSERT_EQ(all.size(), 8u);
  EXPECT_EQ(service_testing::MetricsLosses(resumed_metrics),
            std::vector<std::string>(all.begin() + 6, all.end()));
}

TEST(NodeRestartTest, CheckpointsOfAJobOnNodesAreRunsCheckpointsAndResumeWithRun) {
  const std::string directory = TestDirectory("node_checkpoints");
  LocalCluster cluster(SOFTWIRE_BINARY, directory, 3);
  ASSERT_TRUE(cluster.Start()) << cluster.Output();
  const std::string job = WriteAdamNpyJob(directory);
  // w split over two nodes (its adam state split one axis further in), and a pipeline whose
  // stages without variables send no parts.
  ExpectCheckpointsOfRun(cluster, directory, job, "--tp 2");
  ExpectCheckpointsOfRun(cluster, directory, job, "--pp 3");
}

// The adam tiny job on dp 2 with checkpoints and restarts.
proto::JobSubmission RestartableSubmission(int64_t steps, int max_restarts) {
  proto::JobSubmission submission = service_testing::TinySubmission(steps);
  submission.set_job_text(WithAdam(submission.job_text()));
  proto::RunSettings* settings = submission.mutable_settings();
  settings->mutable_parallel()->set_data_parallel(2);
  settings->set_checkpoint_every(100);
  settings->set_max_restarts(max_restarts);
  return submission;
}

bool IsCheckpoint(const proto::JobEvent& event) {
  return event.has_checkpoint();
}

// A dp 2 job with restarts on three nodes; `signal` (SIGKILL, or SIGSTOP: missed heartbeats) to
// one of its nodes after a checkpoint. The job finishes with an unbroken run's losses.
void ExpectARestartedJobToGiveTheLossesOfRun(int signal, const std::string& name) {
  const std::string directory = TestDirectory(name);
  LocalCluster cluster(SOFTWIRE_BINARY, directory, 3);
  ASSERT_TRUE(cluster.Start()) << cluster.Output();
  service::JobClient client(ClientFor(cluster.address()));
  // Enough steps that the tiny job runs for seconds (about 1000 steps/s on this host).
  constexpr int64_t kSteps = 6000;
  StatusOr<proto::SubmitJobResponse> submitted =
      client.Submit(RestartableSubmission(kSteps, /*max_restarts=*/2));
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  const std::string id = submitted->job().job_id();
  // A checkpoint was written, and more steps ran: then one of its two nodes goes.
  const std::vector<proto::JobEvent> before =
      EventsUntil(cluster.address(), id, 1, IsCheckpoint, 60);
  ASSERT_TRUE(Has(before, IsCheckpoint)) << cluster.Output();
  const proto::JobInfo running =
      WaitForSteps(&client, id, before.back().checkpoint().step() + 15, 30);
  ASSERT_EQ(running.state(), proto::JOB_STATE_RUNNING) << running.DebugString();
  ASSERT_EQ(running.device_size(), 2);
  const std::string victim = running.device(1).substr(0, 5);  // "node1/cpu:0" -> "node1"
  const std::string survivor = running.device(0).substr(0, 5);
  std::string spare;  // The node the job did not use.
  for (int i = 0; i < cluster.size(); ++i) {
    if (cluster.NodeName(i) != victim && cluster.NodeName(i) != survivor) {
      spare = cluster.NodeName(i);
    }
  }
  const double killed_unix =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const char* signal_name = signal == SIGKILL ? "SIGKILL" : "SIGSTOP";
  const pid_t victim_pid = cluster.node(std::stoi(victim.substr(4)))->pid();
  kill(victim_pid, signal);

  const proto::JobInfo done =
      service_testing::WaitForState(&client, id, proto::JOB_STATE_SUCCEEDED, 120);
  if (signal == SIGSTOP) kill(victim_pid, SIGCONT);  // It frees its share and joins again.
  ASSERT_EQ(done.state(), proto::JOB_STATE_SUCCEEDED) << done.DebugString() << cluster.Output();
  EXPECT_EQ(done.restarts(), 1);
  EXPECT_EQ(done.max_restarts(), 2);
  EXPECT_EQ(done.completed_steps(), kSteps);

  // The feed: the lost node and the checkpoint, then the new layout; the steps after it number
  // on from the checkpoint.
  const std::vector<proto::JobEvent> events = service_testing::AllEvents(&client, id);
  int restarted_at = -1;
  int64_t resumed_from = -1;
  for (size_t i = 0; i < events.size(); ++i) {
    if (!events[i].has_restarted()) continue;
    const proto::JobRestarted& restarted = events[i].restarted();
    EXPECT_EQ(restarted.lost_node(), victim);
    EXPECT_TRUE(Contains(restarted.error(), "node '" + victim + "' was lost")) << restarted.error();
    if (signal == SIGSTOP) {
      EXPECT_TRUE(Contains(restarted.error(), "no heartbeat")) << restarted.error();
    }
    EXPECT_EQ(restarted.restart(), 1);
    EXPECT_GT(restarted.resumed_from_step(), 0);
    EXPECT_EQ(restarted.resumed_from_step() % 100, 0);
    if (restarted.device_size() > 0) {
      restarted_at = static_cast<int>(i);
      resumed_from = restarted.resumed_from_step();
      EXPECT_EQ(restarted.checkpoint(),
                "checkpoints/step-" + std::string(8 - std::to_string(resumed_from).size(), '0') +
                    std::to_string(resumed_from));
      // The delay from the kill to the job's start on the new layout (docs/NODES.md quotes it).
      std::printf("measured: restarted on the new layout %.2f s after the %s\n",
                  events[i].time_unix() - killed_unix, signal_name);
      ASSERT_EQ(restarted.device_size(), 2);
      // The survivor's device and the spare node's.
      std::vector<std::string> layout(restarted.device().begin(), restarted.device().end());
      std::sort(layout.begin(), layout.end());
      std::vector<std::string> expected = {survivor + "/cpu:0", spare + "/cpu:0"};
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(layout, expected);
    }
  }
  ASSERT_GE(restarted_at, 0) << "no restart in the feed";
  for (size_t i = static_cast<size_t>(restarted_at) + 1; i < events.size(); ++i) {
    if (!events[i].has_step()) continue;
    EXPECT_EQ(events[i].step().step(), resumed_from) << "the first step after the restart";
    std::printf("measured: its first step after the restart done %.2f s after the %s\n",
                events[i].time_unix() - killed_unix, signal_name);
    break;
  }

  // The job's losses, every step, are an unbroken run's on the same layout, bit for bit.
  const std::string job = directory + "/tiny_adam.pbtxt";
  ASSERT_TRUE(WriteFileAtomically(job, WithAdam(cli_testing::kTinyJob)).ok());
  const std::string run_metrics = directory + "/run.jsonl";
  CommandOutcome run = Softwire("run " + job + " --cluster 2x1cpu --dp 2 --steps " +
                                std::to_string(kSteps) + " --metrics-out " + run_metrics);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::vector<std::string> expected = service_testing::MetricsLosses(run_metrics);
  ASSERT_EQ(expected.size(), static_cast<size_t>(kSteps));
  EXPECT_EQ(service_testing::MetricsLosses(ResultsOf(directory, id) + "/metrics.jsonl"), expected);
}

TEST(NodeRestartTest, ANodeKilledMidJobWithRestartsOnLeadsToAFinishedJobWithTheLossesOfRun) {
  ExpectARestartedJobToGiveTheLossesOfRun(SIGKILL, "node_restart_sigkill");
}

TEST(NodeRestartTest, ANodeStoppedMidJobWithRestartsOnLeadsToAFinishedJobWithTheLossesOfRun) {
  ExpectARestartedJobToGiveTheLossesOfRun(SIGSTOP, "node_restart_sigstop");
}

bool IsWaitingRestart(const proto::JobEvent& event) {
  return event.has_restarted() && event.restarted().device_size() == 0;
}
bool IsStartedRestart(const proto::JobEvent& event) {
  return event.has_restarted() && event.restarted().device_size() > 0;
}

TEST(NodeRestartTest, ARestartWaitsForANodeToJoinAndAJobOutOfRestartsFailsNamingTheNode) {
  const std::string directory = TestDirectory("node_restart_wait");
  LocalCluster cluster(SOFTWIRE_BINARY, directory, 2);
  ASSERT_TRUE(cluster.Start()) << cluster.Output();
  service::JobClient client(ClientFor(cluster.address()));
  // Steps for minutes, not more: the server and the nodes keep per-step records (an endless
  // job of 50 million steps spends seconds allocating them at every start).
  proto::JobSubmission submission = RestartableSubmission(200000, /*max_restarts=*/1);
  submission.mutable_settings()->set_restart_wait_seconds(60);
  StatusOr<proto::SubmitJobResponse> submitted = client.Submit(submission);
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  const std::string id = submitted->job().job_id();
  ASSERT_TRUE(Has(EventsUntil(cluster.address(), id, 1, IsCheckpoint, 60), IsCheckpoint))
      << cluster.Output();

  // node1 lost: one node is left for a job of two devices, which waits rather than fails...
  const double killed_unix =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  StatusOr<proto::JobInfo> before = client.GetJob(id);
  ASSERT_TRUE(before.ok()) << before.status();
  kill(cluster.node(1)->pid(), SIGKILL);
  // (From the latest event on: a watch from the first passes thousands of step events.)
  const std::vector<proto::JobEvent> lost =
      EventsUntil(cluster.address(), id, before->last_event() + 1, IsWaitingRestart, 60);
  ASSERT_TRUE(Has(lost, IsWaitingRestart)) << cluster.Output();
  std::printf("measured: the restart waited for devices from %.2f s after the SIGKILL\n",
              lost.back().time_unix() - killed_unix);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  StatusOr<proto::JobInfo> waiting = client.GetJob(id);
  ASSERT_TRUE(waiting.ok()) << waiting.status();
  EXPECT_EQ(waiting->state(), proto::JOB_STATE_RUNNING) << waiting->DebugString();
  // ...until node1 joins again: it runs from its checkpoint on node0 and node1.
  const double node_started_unix =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  cluster.StartNode(1);
  const std::vector<proto::JobEvent> events =
      EventsUntil(cluster.address(), id, lost.back().sequence() + 1, IsStartedRestart, 60);
  ASSERT_TRUE(Has(events, IsStartedRestart)) << cluster.Output();
  std::printf("measured: the waiting restart got its devices %.2f s after the node was started\n",
              events.back().time_unix() - node_started_unix);
  const int64_t resumed_from = events.back().restarted().resumed_from_step();
  EXPECT_GT(resumed_from, 0);
  const Clock::time_point resumed_at = Clock::now();
  const proto::JobInfo again = WaitForSteps(&client, id, resumed_from + 15, 30);
  std::printf("measured: 15 steps after the restart's devices were found, %.2f s later\n",
              std::chrono::duration<double>(Clock::now() - resumed_at).count());
  ASSERT_EQ(again.state(), proto::JOB_STATE_RUNNING) << again.DebugString() << cluster.Output();

  // Lost again, with its one restart spent: it fails naming the node.
  const Clock::time_point killed_at = Clock::now();
  kill(cluster.node(1)->pid(), SIGKILL);
  const proto::JobInfo failed =
      service_testing::WaitForState(&client, id, proto::JOB_STATE_SUCCEEDED, 15);
  std::printf("measured: the job out of restarts failed %.2f s after the SIGKILL\n",
              std::chrono::duration<double>(Clock::now() - killed_at).count());
  EXPECT_EQ(failed.state(), proto::JOB_STATE_FAILED) << failed.DebugString();
  EXPECT_TRUE(Contains(failed.error(), "node 'node1' was lost")) << failed.error();
  EXPECT_TRUE(Contains(failed.error(), "restarted 1 times already")) << failed.error();
  EXPECT_EQ(failed.restarts(), 1);
}

}  // namespace
}  // namespace softwire
