// `softwire simulate`: compile a job and run its plan in virtual time (simulator/), printing
// the predicted step time, utilization per device queue, the pipeline bubble beside its
// formula, memory per device, and what the simulation cost.
//
//   softwire simulate tests/compiler/jobs/mlp.pbtxt --cluster 8sim --pp 4 --dp 2
//       --micro-batches 8 --steps 10 --trace mlp.trace.json
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/file.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/flag_parser.h"
#include "cli/parallel_flags.h"
#include "compiler/compiler.h"
#include "placement/cluster_model.h"
#include "simulator/simulation_report.h"
#include "simulator/simulation_trace.h"
#include "simulator/simulator.h"
#include "trace/trace_files.h"

namespace softwire {
namespace cli {
namespace {

struct SimulateFlags {
  ParallelFlags parallel;
  int64_t steps = -1;  // -1: not given, the job's steps.
  std::string trace;
  std::string trace_steps;
  double message_us = 1;
  double inter_node_us = -1;  // -1: the cluster's links.
  bool help = false;
};

FlagParser MakeParser(SimulateFlags* flags) {
  FlagParser parser;
  AddParallelFlags(&parser, &flags->parallel);
  parser.AddInt("steps", &flags->steps, "N", "simulate N steps instead of the job's");
  parser.AddString("trace", &flags->trace, "FILE",
                   "write the actor trace (Chrome format, virtual time) to FILE, its summary to "
                   "FILE.summary.txt and its timeline to FILE.svg, as `softwire run --trace`");
  parser.AddString("trace-steps", &flags->trace_steps, "A:B",
                   "record only steps A..B-1 in the trace (default: all)");
  parser.AddDouble("message-us", &flags->message_us, "US",
                   "latency of every protocol message, microseconds (default 1)");
  parser.AddDouble("inter-node-us", &flags->inter_node_us, "US",
                   "latency added between nodes, microseconds (default: the cluster's links)");
  parser.AddBool("help", &flags->help, "show this help");
  return parser;
}

Status CheckFlags(const SimulateFlags& flags) {
  if (flags.steps != -1 && flags.steps < 1) return InvalidArgumentError("--steps must be >= 1");
  if (!(flags.message_us >= 0) || std::isinf(flags.message_us)) {
    return InvalidArgumentError("--message-us must be a number >= 0");
  }
  if (flags.inter_node_us != -1 &&
      (!(flags.inter_node_us >= 0) || std::isinf(flags.inter_node_us))) {
    return InvalidArgumentError("--inter-node-us must be a number >= 0");
  }
  return Status::Ok();
}

// Message latencies: the flag, and between two nodes the latency of the cluster's link between
// their first devices (or the flag).
StatusOr<simulator::LatencyModel> MakeLatency(const SimulateFlags& flags,
                                              const proto::Cluster& cluster,
                                              const proto::Plan& plan) {
  simulator::LatencyModel latency;
  latency.message_ns = simulator::SecondsToSimTime(flags.message_us * 1e-6);
  if (flags.inter_node_us >= 0) {
    latency.inter_node_ns = simulator::SecondsToSimTime(flags.inter_node_us * 1e-6);
    return latency;
  }
  latency.inter_node_ns = simulator::SecondsToSimTime(placement::kInterNodeLatency);
  if (cluster.node_size() == 0) return latency;
  SOFTWIRE_ASSIGN_OR_RETURN(placement::ClusterModel model, placement::ClusterModel::Build(cluster));
  std::map<std::string, int> first_device;  // Node -> its first device in the model.
  for (const placement::ModelDevice& device : model.devices()) {
    first_device.emplace(device.node, device.id);
  }
  std::vector<std::string> nodes;
  for (const proto::PlanDevice& device : plan.device()) {
    if (first_device.count(device.node()) &&
        std::find(nodes.begin(), nodes.end(), device.node()) == nodes.end()) {
      nodes.push_back(device.node());
    }
  }
  for (size_t a = 0; a < nodes.size(); ++a) {
    for (size_t b = a + 1; b < nodes.size(); ++b) {
      const placement::LinkFigures& link =
          model.Link(first_device[nodes[a]], first_device[nodes[b]]);
      latency.node_pairs.push_back({nodes[a], nodes[b], simulator::SecondsToSimTime(link.latency)});
    }
  }
  return latency;
}

int Fail(const Status& status) {
  std::fprintf(stderr, "softwire simulate: %s\n", status.message().c_str());
  return ExitCodeFor(status);
}

}  // namespace

std::string SimulateHelp() {
  SimulateFlags flags;
  return "usage: softwire simulate JOB.pbtxt [flags]\n"
         "\n"
         "Compiles JOB.pbtxt for the cluster and parallel settings given and runs its plan in\n"
         "virtual time: every actor's protocol as the runtime runs it, every kernel taking its\n"
         "estimated seconds on its device queue, every message a fixed latency. Prints the\n"
         "step times, utilization per device queue, the pipeline bubble beside (p-1)/(m+p-1),\n"
         "memory per device, and the events simulated per second.\n"
         "\n"
         "flags:\n" +
         MakeParser(&flags).Help() +
         "\n"
         "exit codes: 0 simulated; 2 bad input (a job, flag or plan error, or a plan that\n"
         "deadlocks); 1 the simulation failed otherwise.\n";
}

int SimulateCommand(const std::vector<std::string>& args) {
  SimulateFlags flags;
  compiler::CompileOptions compile_options;
  // Every flag, placement included, is checked before the job file is read.
  auto check_flags = [&]() -> Status {
    SOFTWIRE_RETURN_IF_ERROR(CheckFlags(flags));
    return ApplyParallelFlags(flags.parallel, &compile_options);
  };
  const FlagParser parser = MakeParser(&flags);
  const CommandLineSpec spec{"simulate", "JOB.pbtxt", "job file",   "",
                             &parser,    &flags.help, SimulateHelp, check_flags};
  std::string job_path;
  if (std::optional<int> exit = ReadCommandLine(spec, args, &job_path)) return *exit;
  simulator::SimulationOptions options;
  if (!flags.trace_steps.empty()) {
    StatusOr<trace::StepWindow> window = trace::ParseStepWindow(flags.trace_steps);
    if (!window.ok()) return Fail(window.status());
    options.trace_steps = *window;
  }
  if (!flags.trace.empty()) {
    Status writable = trace::CheckTraceOutput(flags.trace, "--trace");
    if (!writable.ok()) return Fail(writable);
  }
  StatusOr<compiler::JobFile> job = compiler::ParseJobFile(job_path);
  if (!job.ok()) return Fail(job.status());
  compile_options.steps = flags.steps > 0 ? flags.steps : 0;  // 0: the job's.
  StatusOr<proto::Plan> plan = compiler::CompileJob(*job, compile_options);
  if (!plan.ok()) return Fail(plan.status());
  StatusOr<simulator::LatencyModel> latency = MakeLatency(flags, compile_options.cluster, *plan);
  if (!latency.ok()) return Fail(latency.status());
  options.latency = *latency;

  std::unique_ptr<simulator::SimulationTrace> trace;
  if (!flags.trace.empty()) {
    StatusOr<std::unique_ptr<simulator::SimulationTrace>> created =
        simulator::SimulationTrace::Create();
    if (!created.ok()) return Fail(created.status());
    trace = std::move(*created);
    options.trace_writer = trace->writer();
  }
  StatusOr<simulator::SimulationResult> result = simulator::Simulate(*plan, options);
  if (!result.ok()) return Fail(result.status());
  std::fputs(simulator::FormatSimulationReport(*result).c_str(), stdout);
  if (trace != nullptr) {
    const trace::TraceLog log = trace->TakeLog(*plan, result->steps, options.trace_steps, "ok");
    StatusOr<std::string> written = trace::WriteTraceFiles(flags.trace, log);
    if (!written.ok()) return Fail(written.status().WithContext("--trace"));
    std::string dropped;
    if (log.info.events_dropped > 0) {
      dropped = ", " + std::to_string(log.info.events_dropped) + " dropped at the cap";
    }
    std::printf("trace: %s (%lld firings%s); summary %s.summary.txt; timeline %s.svg\n",
                flags.trace.c_str(), static_cast<long long>(log.info.events_recorded),
                dropped.c_str(), flags.trace.c_str(), flags.trace.c_str());
  }
  return kExitSuccess;
}

}  // namespace cli
}  // namespace softwire
