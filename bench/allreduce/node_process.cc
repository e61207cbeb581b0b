#include "bench/allreduce/node_process.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <thread>
#include <utility>

#include "base/file.h"
#include "runtime/host/execution.h"
#include "runtime/host/hosted_plan.h"
#include "runtime/host/node_runtime.h"
#include "runtime/host/test_plans.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/net/data_plane.h"
#include "trace/trace_model.h"

namespace softwire {
namespace bench {

constexpr actors::JobId kJob = 1;

std::string CpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

ProcessPipe::ProcessPipe(std::vector<std::string> args) {
  int to_child[2];
  int from_child[2];
  CHECK_EQ(pipe2(to_child, O_CLOEXEC), 0);
  CHECK_EQ(pipe2(from_child, O_CLOEXEC), 0);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  // posix_spawn, not fork: a fork write-protects every page of this process (copy-on-write)
  // until each is written again, which would charge the next runs hundreds of thousands of
  // page faults on the registers; glibc's posix_spawn shares the address space until the exec.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
  const int spawned = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  CHECK_EQ(spawned, 0) << "cannot start " << args[0];
  close(to_child[0]);
  close(from_child[1]);
  in_ = fdopen(to_child[1], "w");
  out_ = fdopen(from_child[0], "r");
}

ProcessPipe::~ProcessPipe() {
  fclose(in_);  // End of input: the child ends by itself (the gloo ranks end together).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (waitpid(pid_, nullptr, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  fclose(out_);
}

void ProcessPipe::Send(const std::string& line) {
  fprintf(in_, "%s\n", line.c_str());
  fflush(in_);
}

std::string ProcessPipe::ReadLine() {
  char buffer[256] = {};
  CHECK(fgets(buffer, sizeof(buffer), out_) != nullptr) << "the child process ended";
  std::string line(buffer);
  if (!line.empty() && line.back() == '\n') line.pop_back();
  return line;
}

// One node's share of the plan, hosted, attached per run to its peer.
class NodePair::Share {
 public:
  Share(const proto::Plan& plan, const std::string& node, int shm_chunks) : plan_(plan) {
    runtime::RegisterCpuKernels(&kernels_);
    runtime::testing::RegisterTestKernels(&kernels_, nullptr);
    runtime::NodeRuntimeOptions options;
    options.kernels.cpu = &kernels_;
    for (const proto::PlanDevice& device : plan_.device()) {
      if (device.node() != node) continue;
      runtime::DeviceSpec spec;
      spec.device = device;
      options.devices.push_back(spec);
    }
    StatusOr<std::unique_ptr<runtime::NodeRuntime>> created =
        runtime::NodeRuntime::Create(std::move(options));
    CHECK(created.ok()) << created.status();
    runtime_ = std::move(created).value();
    StatusOr<std::unique_ptr<runtime::HostedPlan>> hosted =
        runtime::HostedPlan::Load(runtime_.get(), plan_, node, kJob);
    CHECK(hosted.ok()) << hosted.status();
    hosted_ = std::move(hosted).value();
    const Status bound = hosted_->Bind({});
    CHECK(bound.ok()) << bound;
    runtime::net::DataPlaneOptions plane_options;
    plane_options.shared_memory_chunks = shm_chunks;
    StatusOr<std::unique_ptr<runtime::net::DataPlane>> plane =
        runtime::net::DataPlane::Create(nullptr, plane_options);
    CHECK(plane.ok()) << plane.status();
    plane_ = std::move(plane).value();
  }
  ~Share() {
    attached_.reset();
    run_.reset();
    hosted_.reset();
    runtime_.reset();
    plane_.reset();
  }
  std::string address() const { return plane_->address(); }
  void Attach(const std::string& peer_node, const std::string& peer_address) {
    runtime::ExecutionOptions options;
    options.stall_timeout = std::chrono::seconds(30);
    options.trace.enabled = trace_next_;
    StatusOr<std::unique_ptr<runtime::Execution>> run =
        runtime::Execution::Create(runtime_.get(), hosted_.get(), options);
    CHECK(run.ok()) << run.status();
    run_ = std::move(run).value();
    StatusOr<std::unique_ptr<runtime::net::DataPlaneAttachment>> attached =
        plane_->Attach(hosted_.get(), run_.get(), {{peer_node, peer_address}});
    CHECK(attached.ok()) << attached.status();
    attached_ = std::move(attached).value();
  }
  double Run() {
    const auto began = std::chrono::steady_clock::now();
    Status status = run_->Run();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    CHECK(status.ok()) << status;
    if (trace_next_) PrintFirings(*run_->TakeTrace());
    trace_next_ = false;
    attached_.reset();
    run_.reset();
    return seconds;
  }
  void TraceNextRun() { trace_next_ = true; }

  // Every firing of this node's actors: launch, kernel start and end in ms from the first.
  void PrintFirings(const trace::TraceLog& log) const {
    trace::TimeNs zero = std::numeric_limits<trace::TimeNs>::max();
    for (const trace::TraceEvent& event : log.events) zero = std::min(zero, event.launch);
    std::vector<trace::TraceEvent> events = log.events;
    std::sort(
        events.begin(), events.end(),
        [](const trace::TraceEvent& a, const trace::TraceEvent& b) { return a.start < b.start; });
    std::printf("firings on node1 (ms from the first launch): launch start end actor\n");
    for (const trace::TraceEvent& event : events) {
      if (event.type != trace::EventType::kFiring) continue;
      std::printf("  %8.2f %8.2f %8.2f  %s\n", (event.launch - zero) / 1e6,
                  (event.start - zero) / 1e6, (event.end - zero) / 1e6,
                  plan_.actor(event.actor).name().c_str());
    }
  }

 private:
  const proto::Plan& plan_;
  runtime::KernelRegistry kernels_;
  std::unique_ptr<runtime::NodeRuntime> runtime_;
  std::unique_ptr<runtime::HostedPlan> hosted_;
  std::unique_ptr<runtime::net::DataPlane> plane_;
  std::unique_ptr<runtime::Execution> run_;
  std::unique_ptr<runtime::net::DataPlaneAttachment> attached_;
  bool trace_next_ = false;
};

void DieWithParent() {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) _exit(1);  // The parent ended before the request.
}

int RunNodeChild(const std::string& plan_file, const std::string& peer, int shm_chunks) {
  DieWithParent();
  StatusOr<std::string> bytes = ReadFile(plan_file);
  CHECK(bytes.ok()) << bytes.status();
  proto::Plan plan;
  CHECK(plan.ParseFromString(*bytes));
  NodePair::Share share(plan, "node0", shm_chunks);
  std::cout << "address " << share.address() << std::endl;
  std::string line;
  while (std::getline(std::cin, line) && line == "attach") {
    share.Attach("node1", peer);
    std::cout << "attached" << std::endl;
    if (!std::getline(std::cin, line) || line != "run") break;
    share.Run();
  }
  return 0;
}

NodePair::NodePair(const proto::Plan& plan, const std::string& plan_file, int shm_chunks)
    : share_(std::make_unique<Share>(plan, "node1", shm_chunks)) {
  char self[4096] = {};
  CHECK_GT(readlink("/proc/self/exe", self, sizeof(self) - 1), 0);
  child_ = std::make_unique<ProcessPipe>(std::vector<std::string>{
      self, "--child", plan_file, share_->address(), std::to_string(shm_chunks)});
  child_address_ = child_->ReadLine().substr(8);
}

NodePair::~NodePair() {
  child_.reset();
  share_.reset();
}

void NodePair::TraceNextRun() {
  share_->TraceNextRun();
}

double NodePair::RunOnce() {
  child_->Send("attach");
  CHECK_EQ(child_->ReadLine(), "attached");
  share_->Attach("node0", child_address_);
  child_->Send("run");
  return share_->Run();
}

}  // namespace bench
}  // namespace softwire
