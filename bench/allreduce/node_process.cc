#include "bench/allreduce/node_process.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
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

// One node's share of the plan, hosted, attached per run to its peer.
class NodePair::Share {
 public:
  Share(const proto::Plan& plan, const std::string& node, int shm_chunks) : plan_(plan) {
    runtime::RegisterCpuKernels(&kernels_);
    runtime::testing::RegisterTestKernels(&kernels_, nullptr);
    runtime::NodeRuntimeOptions options;
    options.kernels.cpu = &kernels_;
    options.caf.transfer_worker = true;  // As `softwire node` runs (docs/DECISIONS.md 37).
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
  child_ = std::make_unique<ProcessPipe>(std::vector<std::string>{
      SelfPath(), "--child", plan_file, share_->address(), std::to_string(shm_chunks)});
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
