// data_plane_node: a test-only stand-in for a node agent. It hosts one node's share of a plan in
// its own process and runs it with the other nodes' processes over the TCP data plane, driven
// line by line on stdin by a test (data_plane_process_test.cc):
//
//   data_plane_node PLAN_FILE NODE JOB_ID [SHM_CHUNKS]   (PLAN_FILE: a binary proto::Plan;
//                                       SHM_CHUNKS: DataPlaneOptions::shared_memory_chunks)
//   out: address HOST:PORT                     its data plane listens there
//   in:  peer NODE HOST:PORT                   one line per other node, then
//   in:  attach                                host the share, create the run, attach it
//   out: attached
//   in:  run
//   out: step STEP OUTPUT VALUE                for every output this share collects
//   out: done ok | done error MESSAGE
//   in:  exit (or end of input)                tear everything down and exit 0
// Any failure prints "error MESSAGE" and exits 1.
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "base/file.h"
#include "proto/plan.pb.h"
#include "runtime/host/execution.h"
#include "runtime/host/hosted_plan.h"
#include "runtime/host/job_events.h"
#include "runtime/host/node_runtime.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/net/data_plane.h"

namespace softwire {
namespace runtime {
namespace {

int Fail(const std::string& message) {
  std::cout << "error " << message << std::endl;
  return 1;
}

// Prints every output of every step as it completes (on the run's thread).
class StepPrinter final : public JobEvents {
 public:
  void OnStep(const CollectedStep& step) override {
    for (const auto& [name, value] : step.outputs) {
      std::cout << "step " << step.step << " " << name << " " << std::setprecision(17) << value
                << std::endl;
    }
  }
};

std::string NextLine() {
  std::string line;
  if (!std::getline(std::cin, line)) return "exit";
  return line;
}

int Main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    return Fail("usage: data_plane_node PLAN_FILE NODE JOB_ID [SHM_CHUNKS]");
  }
  net::DataPlaneOptions plane_options;
  if (argc == 5) plane_options.shared_memory_chunks = std::stoi(argv[4]);
  const std::string node = argv[2];
  const actors::JobId job = std::stoll(argv[3]);
  StatusOr<std::string> bytes = ReadFile(argv[1]);
  if (!bytes.ok()) return Fail(bytes.status().ToString());
  proto::Plan plan;
  if (!plan.ParseFromString(*bytes)) return Fail(std::string(argv[1]) + ": not a plan");

  KernelRegistry kernels;
  RegisterCpuKernels(&kernels);
  NodeRuntimeOptions options;
  options.kernels.cpu = &kernels;
  for (const proto::PlanDevice& device : plan.device()) {
    if (device.node() != node) continue;
    DeviceSpec spec;
    spec.device = device;
    options.devices.push_back(spec);
  }
  StatusOr<std::unique_ptr<NodeRuntime>> runtime = NodeRuntime::Create(std::move(options));
  if (!runtime.ok()) return Fail(runtime.status().ToString());
  StatusOr<std::unique_ptr<net::DataPlane>> plane =
      net::DataPlane::Create(runtime->get(), plane_options);
  if (!plane.ok()) return Fail(plane.status().ToString());
  std::cout << "address " << (*plane)->address() << std::endl;

  std::map<std::string, std::string> peers;
  for (std::string line = NextLine(); line != "attach"; line = NextLine()) {
    std::istringstream words(line);
    std::string verb, peer, address;
    words >> verb >> peer >> address;
    if (verb != "peer") return Fail("expected 'peer NODE ADDRESS' or 'attach', got '" + line + "'");
    peers[peer] = address;
  }
  StatusOr<std::unique_ptr<HostedPlan>> hosted = HostedPlan::Load(runtime->get(), plan, node, job);
  if (!hosted.ok()) return Fail(hosted.status().ToString());
  Status bound = (*hosted)->Bind({});
  if (!bound.ok()) return Fail(bound.ToString());
  StepPrinter printer;
  ExecutionOptions run_options;
  run_options.events = &printer;
  run_options.stall_timeout = std::chrono::seconds(30);
  StatusOr<std::unique_ptr<Execution>> run =
      Execution::Create(runtime->get(), hosted->get(), run_options);
  if (!run.ok()) return Fail(run.status().ToString());
  StatusOr<std::unique_ptr<net::DataPlaneAttachment>> attached =
      (*plane)->Attach(hosted->get(), run->get(), peers);
  if (!attached.ok()) return Fail(attached.status().ToString());
  std::cout << "attached" << std::endl;

  if (NextLine() != "run") return Fail("expected 'run'");
  Status status = (*run)->Run();
  std::cout << (status.ok() ? std::string("done ok") : "done error " + status.ToString())
            << std::endl;
  while (NextLine() != "exit") {
  }
  attached->reset();
  run->reset();
  hosted->reset();
  plane->reset();
  return 0;
}

}  // namespace
}  // namespace runtime
}  // namespace softwire

int main(int argc, char** argv) {
  return softwire::runtime::Main(argc, argv);
}
