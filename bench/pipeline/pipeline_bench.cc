// Pipelining on the CAF runtime's sim devices, in real time (README.md beside this file).
//
// efficiency: a forward-only chain of p pipeline stages on p sim devices, each stage t seconds
//   of compute on its device's compute queue, a copy of `--copy-us` on the next device's copy
//   queue between stages (what the compiler's stage boundary inserts), m micro-batches in one
//   step. Figure: the measured step time over the ideal (m + p - 1) t. Target <= 1.02.
// overlap: two stages (t each) joined by a transfer that takes as long as a stage. The copy
//   runs on the receiving device's copy queue, beside its compute, so the three pipeline:
//   ideal (m + 2) t. Figure: measured over that ideal. Target <= 1.05; 2.0 would mean no
//   overlap (every piece paying transfer + compute on the receiving device in turn).
//
// Plans are built directly (runtime/host/test_plans.h) with the slots the compiler derives for
// such a chain: 2 for the source's output and for registers crossing devices, 1 for the last
// stage's output. Each figure is the median of --repeats runs; the sim timer's lateness (how
// late completions were reported against their deadlines) is printed beside it.
//
//   pipeline_bench                                  # both, 8 x 2 ms x 64 and 2 x 2 ms x 64
//   pipeline_bench --benchmark efficiency --stages 8 --stage-ms 2 --pieces 64 --repeats 7
//   pipeline_bench --benchmark overlap --stage-ms 2 --pieces 64
#include <glog/logging.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/flag_parser.h"
#include "runtime/host/job_runner.h"
#include "runtime/host/test_plans.h"

namespace softwire {
namespace bench {
namespace {

using runtime::testing::TestActorSpec;
using runtime::testing::TestPlan;

struct Flags {
  std::string benchmark = "all";
  int64_t stages = 8;
  double stage_ms = 2;
  int64_t pieces = 64;
  double copy_us = 20;
  int64_t repeats = 5;
  int64_t worker_spin_us = -1;
  bool help = false;
};

// source -> stage0 -> (copy -> stage) x (stages - 1) -> sink, stage s on sim device s.
proto::Plan ChainPlan(int64_t stages, double stage_seconds, double copy_seconds, int64_t pieces) {
  TestPlan plan(/*steps=*/1, pieces);
  plan.DeviceKind(proto::DEVICE_KIND_SIM);
  plan.Register("input", 2);
  plan.Actor(TestActorSpec("source", proto::ACTOR_KIND_SOURCE, "source", {}, {"input"}));
  std::string previous = "input";
  for (int64_t s = 0; s < stages; ++s) {
    const int device = static_cast<int>(s);
    const std::string stage = "stage" + std::to_string(s);
    if (s > 0) {
      const std::string copied = stage + ".in";
      plan.Register(copied, 2, {1024});
      plan.Actor(
          TestActorSpec(stage + ".copy", proto::ACTOR_KIND_COPY, "copy", {previous}, {copied})
              .OnDevice(device)
              .OnQueue(1)
              .Takes(copy_seconds));
      previous = copied;
    }
    const std::string out = stage + ".out";
    if (s + 1 < stages) {
      plan.Register(out, 2, {1024});
    } else {
      plan.Register(out, 1);  // The sink's scalar.
    }
    plan.Actor(TestActorSpec(stage, proto::ACTOR_KIND_COMPUTE, "matmul", {previous}, {out})
                   .OnDevice(device)
                   .Takes(stage_seconds));
    previous = out;
  }
  plan.Actor(TestActorSpec("sink", proto::ACTOR_KIND_SINK, "sink", {previous}, {})
                 .OnDevice(static_cast<int>(stages - 1))
                 .Reports("out"));
  plan.Output("sink", /*is_loss=*/false);
  return plan.Build();
}

struct Measured {
  std::vector<double> seconds;  // Step time, one per repeat.
  double mean_lateness_us = 0;  // Of the median run.
  double max_lateness_us = 0;   // Over all runs.
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Runs `plan` --repeats times; the step time is from the actors' start to the step's end.
StatusOr<Measured> Measure(const proto::Plan& plan, const Flags& flags) {
  Measured measured;
  std::vector<double> lateness;
  for (int64_t r = 0; r < flags.repeats; ++r) {
    runtime::RunOptions options;
    options.stall_timeout_seconds = 30;
    options.caf.worker_spin_us = static_cast<int>(flags.worker_spin_us);
    SOFTWIRE_ASSIGN_OR_RETURN(runtime::RunResult result, runtime::RunPlan(plan, options));
    double seconds = 0;
    for (const runtime::StepResult& step : result.steps) seconds += step.seconds;
    measured.seconds.push_back(seconds);
    lateness.push_back(result.sim_timing.mean_lateness_us);
    measured.max_lateness_us =
        std::max(measured.max_lateness_us, result.sim_timing.max_lateness_us);
  }
  measured.mean_lateness_us = Median(lateness);
  return measured;
}

void PrintRuns(const Measured& measured) {
  std::printf("  runs (ms):");
  for (double seconds : measured.seconds) std::printf(" %.3f", seconds * 1e3);
  std::printf("\n  sim timer lateness: median of mean %.1f us, max %.1f us\n",
              measured.mean_lateness_us, measured.max_lateness_us);
}

int Efficiency(const Flags& flags) {
  const double t = flags.stage_ms * 1e-3;
  const proto::Plan plan = ChainPlan(flags.stages, t, flags.copy_us * 1e-6, flags.pieces);
  StatusOr<Measured> measured = Measure(plan, flags);
  if (!measured.ok()) {
    std::fprintf(stderr, "efficiency: %s\n", measured.status().message().c_str());
    return 1;
  }
  const double ideal = static_cast<double>(flags.pieces + flags.stages - 1) * t;
  const double median = Median(measured->seconds);
  const double ratio = median / ideal;
  std::printf(
      "pipeline efficiency: %lld stages x %.3f ms on %lld sim devices, %lld micro-batches, "
      "copies %.0f us between stages, %lld repeats\n",
      static_cast<long long>(flags.stages), flags.stage_ms, static_cast<long long>(flags.stages),
      static_cast<long long>(flags.pieces), flags.copy_us, static_cast<long long>(flags.repeats));
  PrintRuns(*measured);
  std::printf(
      "  ideal (m+p-1)t = %.3f ms; measured median %.3f ms; ratio %.4f (target <= 1.02: %s)\n",
      ideal * 1e3, median * 1e3, ratio, ratio <= 1.02 ? "met" : "MISSED");
  std::printf("  (the copies add (p-1) x copy = %.3f ms to any schedule: %.4f of the ideal)\n",
              (flags.stages - 1) * flags.copy_us * 1e-3,
              (flags.stages - 1) * flags.copy_us * 1e-6 / ideal);
  return ratio <= 1.02 ? 0 : 1;
}

int Overlap(const Flags& flags) {
  const double t = flags.stage_ms * 1e-3;
  const proto::Plan plan = ChainPlan(2, t, t, flags.pieces);
  StatusOr<Measured> measured = Measure(plan, flags);
  if (!measured.ok()) {
    std::fprintf(stderr, "overlap: %s\n", measured.status().message().c_str());
    return 1;
  }
  const double ideal = static_cast<double>(flags.pieces + 2) * t;
  const double median = Median(measured->seconds);
  const double ratio = median / ideal;
  std::printf(
      "overlap: 2 stages x %.3f ms, each transfer %.3f ms on the receiver's copy queue, "
      "%lld micro-batches, %lld repeats\n",
      flags.stage_ms, flags.stage_ms, static_cast<long long>(flags.pieces),
      static_cast<long long>(flags.repeats));
  PrintRuns(*measured);
  std::printf(
      "  overlapped ideal (m+2)t = %.3f ms (no overlap: 2mt = %.3f ms); measured median "
      "%.3f ms; ratio %.4f (target <= 1.05: %s)\n",
      ideal * 1e3, 2 * flags.pieces * t * 1e3, median * 1e3, ratio,
      ratio <= 1.05 ? "met" : "MISSED");
  return ratio <= 1.05 ? 0 : 1;
}

int Main(int argc, char** argv) {
  Flags flags;
  cli::FlagParser parser;
  parser.AddString("benchmark", &flags.benchmark, "NAME", "efficiency, overlap or all");
  parser.AddInt("stages", &flags.stages, "P", "pipeline stages of the efficiency chain (8)");
  parser.AddDouble("stage-ms", &flags.stage_ms, "T", "milliseconds per stage (2)");
  parser.AddInt("pieces", &flags.pieces, "M", "micro-batches (64)");
  parser.AddDouble("copy-us", &flags.copy_us, "US",
                   "microseconds per copy between efficiency stages (20)");
  parser.AddInt("repeats", &flags.repeats, "R", "runs per figure; the median is reported (5)");
  parser.AddInt("worker-spin-us", &flags.worker_spin_us, "US",
                "CAF workers spin this long before sleeping (-1: the runtime's default)");
  parser.AddBool("help", &flags.help, "show this help");
  std::vector<std::string> args(argv + 1, argv + argc);
  std::vector<std::string> positional;
  Status parsed = parser.Parse(args, &positional);
  if (flags.help || !parsed.ok() || !positional.empty() || flags.stages < 2 || flags.pieces < 1 ||
      flags.repeats < 1 || !(flags.stage_ms > 0)) {
    std::fprintf(stderr, "%s\nusage: pipeline_bench [flags]\n%s",
                 parsed.ok() ? "" : parsed.message().c_str(), parser.Help().c_str());
    return flags.help ? 0 : 2;
  }
  std::string command = "command:";
  for (int i = 0; i < argc; ++i) command += std::string(" ") + argv[i];
  std::printf("%s\n", command.c_str());
  int failed = 0;
  if (flags.benchmark == "all" || flags.benchmark == "efficiency") failed |= Efficiency(flags);
  if (flags.benchmark == "all" || flags.benchmark == "overlap") failed |= Overlap(flags);
  return failed;
}

}  // namespace
}  // namespace bench
}  // namespace softwire

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  return softwire::bench::Main(argc, argv);
}
