// The data plane between real processes: a compiled MLP plan, pipeline-parallel and
// data-parallel over node0 and node1, run as two data_plane_node processes (one share each,
// connected only by their data planes on free loopback ports, wire bytes over TCP or through the
// same-host shared-memory ring) gives exactly the per-step losses of the same plan run whole in
// this process; a node process killed mid-job fails the other's
// run with an error naming the node. Every child is killed and reaped whatever a test does.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/file.h"
#include "compiler/compiler.h"
#include "placement/cluster_spec.h"
#include "runtime/host/execution.h"
#include "runtime/host/hosted_plan.h"
#include "runtime/host/job_events.h"
#include "runtime/host/node_runtime.h"
#include "runtime/kernels/cpu/cpu_kernels.h"

namespace softwire {
namespace runtime {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kSteps = 4;
constexpr auto kLineTimeout = std::chrono::seconds(60);

proto::Plan CompileMlp(int dp, int pp) {
  StatusOr<compiler::JobFile> file = compiler::ParseJobFile("tests/compiler/jobs/mlp.pbtxt");
  CHECK(file.ok()) << file.status();
  compiler::CompileOptions options;
  options.steps = kSteps;
  StatusOr<proto::Cluster> cluster = placement::ParseClusterShorthand("2x1cpu", 2);
  CHECK(cluster.ok()) << cluster.status();
  options.cluster = *cluster;
  options.parallel.set_data_parallel(dp);
  options.parallel.set_pipeline_stages(pp);
  StatusOr<proto::Plan> plan = compiler::CompileJob(*file, options);
  CHECK(plan.ok()) << plan.status();
  return std::move(plan).value();
}

class LossRecorder final : public JobEvents {
 public:
  void OnStep(const CollectedStep& step) override {
    auto found = step.outputs.find("loss");
    if (found != step.outputs.end()) losses[step.step] = found->second;
  }
  std::map<int64_t, double> losses;
};

// The plan hosted whole by one runtime in this process.
std::map<int64_t, double> RunWhole(const proto::Plan& plan) {
  KernelRegistry kernels;
  RegisterCpuKernels(&kernels);
  NodeRuntimeOptions options;
  options.kernels.cpu = &kernels;
  for (const proto::PlanDevice& device : plan.device()) {
    DeviceSpec spec;
    spec.device = device;
    options.devices.push_back(spec);
  }
  StatusOr<std::unique_ptr<NodeRuntime>> runtime = NodeRuntime::Create(std::move(options));
  CHECK(runtime.ok()) << runtime.status();
  StatusOr<std::unique_ptr<HostedPlan>> hosted = (*runtime)->Host(plan);
  CHECK(hosted.ok()) << hosted.status();
  LossRecorder recorder;
  ExecutionOptions run_options;
  run_options.events = &recorder;
  run_options.stall_timeout = std::chrono::seconds(20);
  StatusOr<std::unique_ptr<Execution>> run =
      Execution::Create(runtime->get(), hosted->get(), run_options);
  CHECK(run.ok()) << run.status();
  Status status = (*run)->Run();
  EXPECT_TRUE(status.ok()) << status;
  return recorder.losses;
}

// One data_plane_node child, talked to over pipes. Killed and reaped when destroyed.
class NodeProcess {
 public:
  // `shm_chunks`: the data plane's shared_memory_chunks (0: every byte over TCP).
  NodeProcess(const std::string& plan_file, const std::string& node, int shm_chunks = 8)
      : node_(node) {
    const std::string chunks = std::to_string(shm_chunks);
    int to_child[2];
    int from_child[2];
    CHECK_EQ(pipe2(to_child, O_CLOEXEC), 0);
    CHECK_EQ(pipe2(from_child, O_CLOEXEC), 0);
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // Dies with the test, also when the test crashes.
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      execl(DATA_PLANE_NODE_BINARY, DATA_PLANE_NODE_BINARY, plan_file.c_str(), node.c_str(), "7",
            chunks.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
  }
  ~NodeProcess() {
    Kill();
    if (in_ >= 0) close(in_);
    if (out_ >= 0) close(out_);
  }

  void Send(const std::string& line) {
    const std::string text = line + "\n";
    EXPECT_EQ(write(in_, text.data(), text.size()), static_cast<ssize_t>(text.size())) << node_;
  }
  // The next line it prints, or nullopt at its end or after kLineTimeout.
  std::optional<std::string> ReadLine() {
    const Clock::time_point give_up = Clock::now() + kLineTimeout;
    while (true) {
      const size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return line;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(give_up - Clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd readable{out_, POLLIN, 0};
      if (poll(&readable, 1, static_cast<int>(left.count())) <= 0) continue;
      char chunk[4096];
      const ssize_t got = read(out_, chunk, sizeof(chunk));
      if (got <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<size_t>(got));
    }
  }
  // Reads lines until one starts with `prefix`; every line read goes to `seen`.
  std::optional<std::string> ReadUntil(const std::string& prefix,
                                       std::vector<std::string>* seen = nullptr) {
    while (std::optional<std::string> line = ReadLine()) {
      if (seen != nullptr) seen->push_back(*line);
      if (line->rfind(prefix, 0) == 0) return line;
      if (line->rfind("error", 0) == 0) {
        ADD_FAILURE() << node_ << ": " << *line;
        return std::nullopt;
      }
    }
    ADD_FAILURE() << node_ << ": ended or timed out waiting for '" << prefix << "'";
    return std::nullopt;
  }
  // Waits for it to exit by itself (true when it exited with 0 in time).
  bool AwaitCleanExit(std::chrono::seconds within) {
    const Clock::time_point give_up = Clock::now() + within;
    int status = 0;
    while (Clock::now() < give_up) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  const std::string node_;
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  std::string buffer_;
};

std::string WritePlan(const proto::Plan& plan, const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name + "." + std::to_string(getpid());
  CHECK(WriteFileAtomically(path, plan.SerializeAsString()).ok());
  return path;
}

// Starts both nodes, exchanges their addresses and attaches them. False on any failure.
bool StartAndAttach(NodeProcess& node0, NodeProcess& node1) {
  std::optional<std::string> address0 = node0.ReadUntil("address ");
  std::optional<std::string> address1 = node1.ReadUntil("address ");
  if (!address0 || !address1) return false;
  node0.Send("peer node1 " + address1->substr(8));
  node1.Send("peer node0 " + address0->substr(8));
  node0.Send("attach");
  node1.Send("attach");
  return node0.ReadUntil("attached").has_value() && node1.ReadUntil("attached").has_value();
}

// The "step S loss V" lines among `lines`.
std::map<int64_t, double> LossesIn(const std::vector<std::string>& lines) {
  std::map<int64_t, double> losses;
  for (const std::string& line : lines) {
    std::istringstream words(line);
    std::string verb, output;
    int64_t step = 0;
    double value = 0;
    if (words >> verb >> step >> output >> value && verb == "step" && output == "loss") {
      losses[step] = value;
    }
  }
  return losses;
}

void ExpectTwoProcessesGiveTheLossesOfOne(const proto::Plan& plan, const std::string& name,
                                          int shm_chunks) {
  const std::map<int64_t, double> expected = RunWhole(plan);
  ASSERT_EQ(expected.size(), static_cast<size_t>(kSteps));
  const std::string plan_file = WritePlan(plan, name);
  NodeProcess node0(plan_file, "node0", shm_chunks);
  NodeProcess node1(plan_file, "node1", shm_chunks);
  ASSERT_TRUE(StartAndAttach(node0, node1));
  node0.Send("run");
  node1.Send("run");
  std::vector<std::string> lines;
  std::optional<std::string> done0 = node0.ReadUntil("done", &lines);
  std::optional<std::string> done1 = node1.ReadUntil("done", &lines);
  ASSERT_TRUE(done0 && done1);
  EXPECT_EQ(*done0, "done ok");
  EXPECT_EQ(*done1, "done ok");
  EXPECT_EQ(LossesIn(lines), expected);  // Bit for bit: the same kernels on the same bytes.
  node0.Send("exit");
  node1.Send("exit");
  EXPECT_TRUE(node0.AwaitCleanExit(std::chrono::seconds(20)));
  EXPECT_TRUE(node1.AwaitCleanExit(std::chrono::seconds(20)));
  std::remove(plan_file.c_str());
}

TEST(DataPlaneProcesses, PipelineParallelMlpOverTcpGivesTheLossesOfOneProcess) {
  ExpectTwoProcessesGiveTheLossesOfOne(CompileMlp(/*dp=*/1, /*pp=*/2), "mlp_pp2", 0);
}

TEST(DataPlaneProcesses, DataParallelMlpOverTcpGivesTheLossesOfOneProcess) {
  ExpectTwoProcessesGiveTheLossesOfOne(CompileMlp(/*dp=*/2, /*pp=*/1), "mlp_dp2", 0);
}

TEST(DataPlaneProcesses, PipelineParallelMlpThroughSharedMemoryGivesTheLossesOfOneProcess) {
  ExpectTwoProcessesGiveTheLossesOfOne(CompileMlp(/*dp=*/1, /*pp=*/2), "mlp_pp2_shm", 8);
}

TEST(DataPlaneProcesses, DataParallelMlpThroughSharedMemoryGivesTheLossesOfOneProcess) {
  ExpectTwoProcessesGiveTheLossesOfOne(CompileMlp(/*dp=*/2, /*pp=*/1), "mlp_dp2_shm", 8);
}

TEST(DataPlaneProcesses, ANodeKilledMidJobFailsTheOtherNodesRunNamingIt) {
  const std::string plan_file = WritePlan(CompileMlp(1, 2), "mlp_kill");
  NodeProcess node0(plan_file, "node0");
  NodeProcess node1(plan_file, "node1");
  ASSERT_TRUE(StartAndAttach(node0, node1));
  node1.Send("run");  // node0 never runs: node1 waits for its data, then loses it.
  node0.Kill();
  std::optional<std::string> done1 = node1.ReadUntil("done");
  ASSERT_TRUE(done1.has_value());
  EXPECT_NE(done1->find("done error"), std::string::npos) << *done1;
  EXPECT_NE(done1->find("node 'node0'"), std::string::npos) << *done1;
  node1.Send("exit");
  EXPECT_TRUE(node1.AwaitCleanExit(std::chrono::seconds(20)));
  std::remove(plan_file.c_str());
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
