// Actor overhead: what one actor firing costs softwire's CAF host when the kernel does nothing.
//
// A chain of N actors (source -> N-2 computes -> sink), one register per hop with S slots,
// P pieces; every actor fires once per piece with a no-op kernel. Reported: wall time of the
// run divided by its N * P firings (amortized microseconds per firing) and firings per second,
// the median of R repeats, for several slot counts; beside it, in the same process and with
// the same scheduler settings, CAF's raw messaging through a chain of N actors: one-way
// forwarding (one message per hop) and credited forwarding (a message and an ack per hop,
// as softwire's Ready and Release). CPU time per firing (all threads of the process) is
// printed too: on a shared machine it moves less than wall time.
//
// --trace measures the cost of actor traces (docs/TRACING.md): each softwire figure is then
// taken twice, untraced and traced, alternating run by run so that drift on a shared machine
// hits both alike, and the traced/untraced ratio of the medians is printed. --trace-steps
// records only a window of steps (a step is one piece), as `softwire run --trace-steps` does.
//
//   actor_overhead_bench --actors 16 --pieces 20000 --repeats 7 --slots 1,2,4,8
//   actor_overhead_bench --slots 2 --repeats 11 --trace --only softwire
//   actor_overhead_bench --trace --trace-steps 1000:1200 --only softwire   (a step window)
//
// --in-flight measures several firings in flight (docs/PROTOCOL.md): the chain on one sim
// device whose compute kernels take --kernel-us and reach the queue --launch-latency-us after
// their launch (a GPU's launch latency; SimClockOptions::launch_latency), with every compute
// actor at max_in_flight k for each k listed, the runs of the ks alternating repeat by repeat
// (paired, so drift on a shared machine hits all alike), the median per k.
//
//   actor_overhead_bench --in-flight 1,2,4 --slots 9 --kernel-us 2 --launch-latency-us 40
//       --actors 6 --pieces 2000 --repeats 7      (one command line)
#include <glog/logging.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/actor_overhead/caf_chain.h"
#include "cli/flag_parser.h"
#include "runtime/host/job_runner.h"
#include "runtime/host/test_plans.h"
#include "trace/trace_recorder.h"

namespace softwire {
namespace bench {
namespace {

using runtime::testing::TestActorSpec;

struct Flags {
  int64_t actors = 16;
  int64_t pieces = 20000;
  int64_t repeats = 7;
  std::string slots = "1,2,4,8";
  int64_t caf_threads = 1;
  std::string caf_policy = "sharing";
  int64_t caf_credits = 2;
  std::string only;                // Measure only one side, for profiling (see --only).
  bool trace = false;              // Also measure with tracing on.
  std::string trace_steps;         // With --trace: record only these steps (pieces), "A:B".
  std::string in_flight;           // Non-empty: measure these max_in_flight values on a sim device.
  int64_t kernel_us = 2;           // With --in-flight: what each compute kernel takes.
  int64_t launch_latency_us = 40;  // With --in-flight: a kernel launch's latency.
};

// "1,2,4" -> {1, 2, 4}; each at least 1.
std::vector<int> ParseList(const std::string& text) {
  std::vector<int> values;
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    values.push_back(std::max(1, std::atoi(text.substr(begin, end - begin).c_str())));
    begin = end + 1;
  }
  return values;
}

struct Figure {
  std::string name;
  std::vector<double> seconds;      // Wall time, one per repeat.
  std::vector<double> cpu_seconds;  // CPU time of the whole process, one per repeat.
  int64_t firings = 0;              // Per repeat.
};

// CPU seconds this process used so far, all threads together.
double ProcessCpuSeconds() {
  timespec now;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return now.tv_sec + now.tv_nsec * 1e-9;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// `kernel_seconds` > 0: on a sim device, each compute kernel taking that long, each compute actor
// with `in_flight` firings in flight.
proto::Plan ChainPlan(int actors, int64_t pieces, int slots, double kernel_seconds = 0,
                      int in_flight = 1) {
  runtime::testing::TestPlan plan(/*steps=*/pieces, /*pieces_per_step=*/1);
  if (kernel_seconds > 0) plan.DeviceKind(proto::DEVICE_KIND_SIM);
  for (int hop = 0; hop + 1 < actors; ++hop) plan.Register("r" + std::to_string(hop), slots);
  plan.Actor(TestActorSpec("a0", proto::ACTOR_KIND_SOURCE, "noop", {}, {"r0"}));
  for (int i = 1; i + 1 < actors; ++i) {
    plan.Actor(TestActorSpec("a" + std::to_string(i), proto::ACTOR_KIND_COMPUTE, "noop",
                             {"r" + std::to_string(i - 1)}, {"r" + std::to_string(i)})
                   .Takes(kernel_seconds));
  }
  const std::string sink = "a" + std::to_string(actors - 1);
  plan.Actor(
      TestActorSpec(sink, proto::ACTOR_KIND_SINK, "noop", {"r" + std::to_string(actors - 2)}, {}));
  if (kernel_seconds > 0) plan.Output(sink, /*is_loss=*/false);  // A sim sink reports it.
  proto::Plan built = plan.Build();
  for (proto::ActorDef& actor : *built.mutable_actor()) {
    if (actor.kind() == proto::ACTOR_KIND_COMPUTE) actor.set_max_in_flight(in_flight);
  }
  return built;
}

// Per k of --in-flight: the chain on a sim device with launch latency, runs alternating.
StatusOr<std::vector<Figure>> MeasureInFlight(const Flags& flags, int slots) {
  runtime::KernelRegistry kernels;
  runtime::testing::RegisterTestKernels(&kernels, /*log=*/nullptr);
  runtime::RunOptions options;
  options.cpu_kernels = &kernels;
  options.blas_threads = -1;
  options.caf.max_threads = static_cast<int>(flags.caf_threads);
  options.caf.policy = flags.caf_policy;
  options.sim.launch_latency = std::chrono::microseconds(flags.launch_latency_us);
  const std::vector<int> ks = ParseList(flags.in_flight);
  std::vector<proto::Plan> plans;
  std::vector<Figure> figures(ks.size());
  for (size_t i = 0; i < ks.size(); ++i) {
    plans.push_back(ChainPlan(static_cast<int>(flags.actors), flags.pieces, slots,
                              static_cast<double>(flags.kernel_us) * 1e-6, ks[i]));
    figures[i].name = "sim, " + std::to_string(ks[i]) + " in flight";
  }
  for (int64_t repeat = 0; repeat < flags.repeats; ++repeat) {
    for (size_t i = 0; i < ks.size(); ++i) {
      double cpu_start = ProcessCpuSeconds();
      SOFTWIRE_ASSIGN_OR_RETURN(runtime::RunResult result, runtime::RunPlan(plans[i], options));
      figures[i].cpu_seconds.push_back(ProcessCpuSeconds() - cpu_start);
      figures[i].seconds.push_back(result.seconds);
      figures[i].firings = result.firings;
    }
  }
  return figures;
}

// Runs the chain R times; with `traced`, R times untraced and R times traced, alternating.
StatusOr<std::vector<Figure>> MeasureSoftwire(const Flags& flags, int slots, bool traced) {
  runtime::KernelRegistry kernels;
  runtime::testing::RegisterTestKernels(&kernels, /*log=*/nullptr);
  proto::Plan plan = ChainPlan(static_cast<int>(flags.actors), flags.pieces, slots);
  runtime::RunOptions options;
  options.cpu_kernels = &kernels;
  options.blas_threads = -1;
  options.caf.max_threads = static_cast<int>(flags.caf_threads);
  options.caf.policy = flags.caf_policy;
  if (!flags.trace_steps.empty()) {
    SOFTWIRE_ASSIGN_OR_RETURN(options.trace.steps, trace::ParseStepWindow(flags.trace_steps));
  }
  const std::string name =
      "softwire chain, " + std::to_string(slots) + " slot" + (slots > 1 ? "s" : "");
  std::vector<Figure> figures(traced ? 2 : 1);
  figures[0].name = name;
  if (traced) {
    figures[1].name = name + ", traced";
    if (!flags.trace_steps.empty()) figures[1].name += " " + flags.trace_steps;
  }
  for (int64_t repeat = 0; repeat < flags.repeats; ++repeat) {
    for (size_t which = 0; which < figures.size(); ++which) {
      options.trace.enabled = which == 1;
      double cpu_start = ProcessCpuSeconds();
      SOFTWIRE_ASSIGN_OR_RETURN(runtime::RunResult result, runtime::RunPlan(plan, options));
      figures[which].cpu_seconds.push_back(ProcessCpuSeconds() - cpu_start);
      figures[which].seconds.push_back(result.seconds);
      figures[which].firings = result.firings;
      if (result.trace && result.trace->info.events_dropped > 0) {
        return InternalError("the trace dropped events; raise the cap");
      }
    }
  }
  return figures;
}

Figure MeasureCaf(const Flags& flags, bool credited) {
  CafChainOptions options;
  options.actors = static_cast<int>(flags.actors);
  options.messages = flags.pieces;
  options.credits = static_cast<int>(flags.caf_credits);
  options.threads = static_cast<int>(flags.caf_threads);
  options.policy = flags.caf_policy;
  Figure figure;
  figure.name = credited ? "CAF credited chain, " + std::to_string(flags.caf_credits) + " credits"
                         : "CAF forward chain (raw hop)";
  figure.firings = flags.actors * flags.pieces;
  for (int64_t repeat = 0; repeat < flags.repeats; ++repeat) {
    double cpu_start = ProcessCpuSeconds();
    figure.seconds.push_back(credited ? TimeCafCreditChain(options) : TimeCafForwardChain(options));
    figure.cpu_seconds.push_back(ProcessCpuSeconds() - cpu_start);
  }
  return figure;
}

void Print(const Figure& figure) {
  double median = Median(figure.seconds);
  double best = *std::min_element(figure.seconds.begin(), figure.seconds.end());
  double worst = *std::max_element(figure.seconds.begin(), figure.seconds.end());
  double firings = static_cast<double>(figure.firings);
  std::printf("%-34s %7.3f us  (%.3f .. %.3f)  %6.2f M/s   %7.3f us\n", figure.name.c_str(),
              median / firings * 1e6, best / firings * 1e6, worst / firings * 1e6,
              firings / median / 1e6, Median(figure.cpu_seconds) / firings * 1e6);
}

int Main(int argc, char** argv) {
  Flags flags;
  cli::FlagParser parser;
  parser.AddInt("actors", &flags.actors, "N", "actors in the chain (>= 2)");
  parser.AddInt("pieces", &flags.pieces, "P", "pieces through the chain per run");
  parser.AddInt("repeats", &flags.repeats, "R", "runs per figure; the median is reported");
  parser.AddString("slots", &flags.slots, "LIST", "slot counts per register, comma-separated");
  parser.AddInt("caf-threads", &flags.caf_threads, "N", "CAF scheduler threads");
  parser.AddString("caf-policy", &flags.caf_policy, "POLICY", "sharing or stealing");
  parser.AddInt("caf-credits", &flags.caf_credits, "N", "window of the credited CAF chain");
  parser.AddString("only", &flags.only, "SIDE",
                   "measure only 'softwire', 'caf', 'caf-forward' or 'caf-credited'");
  parser.AddBool("trace", &flags.trace,
                 "also measure each softwire chain traced, alternating with untraced runs");
  parser.AddString("trace-steps", &flags.trace_steps, "A:B",
                   "with --trace, record only steps A..B-1 (a step is one piece here)");
  parser.AddString("in-flight", &flags.in_flight, "LIST",
                   "measure these max_in_flight values (comma-separated) on a sim device with "
                   "launch latency, instead of the cpu chains");
  parser.AddInt("kernel-us", &flags.kernel_us, "US", "with --in-flight: each compute kernel");
  parser.AddInt("launch-latency-us", &flags.launch_latency_us, "US",
                "with --in-flight: each kernel launch's latency");
  std::vector<std::string> positional;
  Status status = parser.Parse(std::vector<std::string>(argv + 1, argv + argc), &positional);
  if (!status.ok() || !positional.empty() || flags.actors < 2 || flags.pieces < 1 ||
      flags.repeats < 1) {
    std::fprintf(stderr, "%s\nusage: actor_overhead_bench [flags]\n%s",
                 status.ok() ? "bad arguments" : status.message().c_str(), parser.Help().c_str());
    return 2;
  }
  const std::vector<int> slot_counts = ParseList(flags.slots);
  std::printf(
      "chain of %lld actors, %lld pieces, %lld repeats (median, min .. max); CAF %s, "
      "%lld thread(s)\n",
      static_cast<long long>(flags.actors), static_cast<long long>(flags.pieces),
      static_cast<long long>(flags.repeats), flags.caf_policy.c_str(),
      static_cast<long long>(flags.caf_threads));
  std::printf("%-34s %10s  %-18s  %9s   %s\n", "", "wall/firing", "(min .. max)", "firings",
              "cpu/firing");
  if (!flags.in_flight.empty()) {
    std::printf("sim device: kernels of %lld us, launch latency %lld us\n",
                static_cast<long long>(flags.kernel_us),
                static_cast<long long>(flags.launch_latency_us));
    for (int slots : slot_counts) {
      StatusOr<std::vector<Figure>> figures = MeasureInFlight(flags, slots);
      if (!figures.ok()) {
        std::fprintf(stderr, "in-flight chain failed: %s\n", figures.status().ToString().c_str());
        return 1;
      }
      for (Figure& figure : *figures) {
        figure.name += ", " + std::to_string(slots) + " slots";
        Print(figure);
      }
    }
    return 0;
  }
  for (int slots : slot_counts) {
    if (flags.only.compare(0, 3, "caf") == 0) break;
    StatusOr<std::vector<Figure>> figures = MeasureSoftwire(flags, slots, flags.trace);
    if (!figures.ok()) {
      std::fprintf(stderr, "softwire chain failed: %s\n", figures.status().ToString().c_str());
      return 1;
    }
    for (const Figure& figure : *figures) Print(figure);
    if (figures->size() == 2) {
      const std::vector<Figure>& f = *figures;
      auto best = [](const std::vector<double>& values) {
        return *std::min_element(values.begin(), values.end());
      };
      std::printf(
          "%-34s %7.3f x wall (median), %.3f x wall (best of each), %.3f x cpu "
          "(median; cpu includes handing the trace over)\n",
          "  traced / untraced", Median(f[1].seconds) / Median(f[0].seconds),
          best(f[1].seconds) / best(f[0].seconds),
          Median(f[1].cpu_seconds) / Median(f[0].cpu_seconds));
    }
  }
  if (flags.only == "softwire") return 0;
  if (flags.only != "caf-credited") Print(MeasureCaf(flags, /*credited=*/false));
  if (flags.only != "caf-forward") Print(MeasureCaf(flags, /*credited=*/true));
  return 0;
}

}  // namespace
}  // namespace bench
}  // namespace softwire

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  return softwire::bench::Main(argc, argv);
}
