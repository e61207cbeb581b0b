// Simulator throughput (bench/simulator/README.md): events per wall second of
// simulator::Simulator::Run on a compiled plan of well over 100,000 actors.
//
// The plan is bench/compile's synthetic job (synthetic_job.h), 2,500 ops trained with Adam on
// 64 sim devices (8 nodes of 8; pp 8 x dp 8): 121,026 actors, 2.5 million events per run
// (2 steps of 4 pieces). Each repeat builds a fresh
// Simulator (not timed: describing the plan and creating one ActorProtocol per actor) and runs
// it (timed); the median events/s over the repeats is the figure, target > 1 million.
//
//   build/bench/simulator/simulator_bench                      # the figure
//   build/bench/simulator/simulator_bench --steps 4 --micro-batches 8 --repeats 3
//   build/bench/simulator/simulator_bench --ops 200 --pp 4 --dp 2   # a small plan
//   build/bench/simulator/simulator_bench --ops 10000 --pp 16 --dp 16 --repeats 1  # 946,370 actors
//   build/bench/simulator/simulator_bench --intervals 0         # without busy intervals
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/common/synthetic_job.h"
#include "compiler/compiler.h"
#include "placement/cluster_spec.h"
#include "simulator/simulation_report.h"
#include "simulator/simulator.h"

namespace softwire {
namespace {

struct BenchSetting {
  int ops = 2500;
  int pp = 8;
  int dp = 8;
  int tp = 1;
  int steps = 2;
  int micro_batches = 4;
  int repeats = 5;
  bool intervals = true;
  bool report = false;  // Print the simulation report of the last run.
  double target = 1e6;  // Events per second.
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

int Run(const BenchSetting& setting) {
  compiler::JobFile job_file;
  job_file.job = bench::SyntheticJob(setting.ops, 32, 256);
  compiler::CompileOptions options;
  const int per_node = setting.dp * setting.tp;
  StatusOr<proto::Cluster> cluster = placement::ParseClusterShorthand(
      std::to_string(setting.pp) + "x" + std::to_string(per_node) + "sim", 2);
  CHECK(cluster.ok()) << cluster.status();
  options.cluster = *cluster;
  options.parallel.set_data_parallel(setting.dp);
  options.parallel.set_tensor_parallel(setting.tp);
  options.parallel.set_pipeline_stages(setting.pp);
  options.steps = setting.steps;
  options.micro_batches_per_step = setting.micro_batches;
  auto compile_start = std::chrono::steady_clock::now();
  StatusOr<proto::Plan> plan = compiler::CompileJob(job_file, options);
  if (!plan.ok()) {
    std::fprintf(stderr, "compile failed: %s\n", plan.status().message().c_str());
    return 2;
  }
  const double compile_seconds = Seconds(compile_start);

  simulator::SimulationOptions simulation;
  simulation.record_busy_intervals = setting.intervals;
  std::vector<double> rates;
  std::vector<double> setup_seconds;
  simulator::SimulationResult last;
  for (int i = 0; i < setting.repeats; ++i) {
    auto setup_start = std::chrono::steady_clock::now();
    StatusOr<std::unique_ptr<simulator::Simulator>> created =
        simulator::Simulator::Create(*plan, simulation);
    CHECK(created.ok()) << created.status();
    setup_seconds.push_back(Seconds(setup_start));
    StatusOr<simulator::SimulationResult> result = (*created)->Run();
    CHECK(result.ok()) << result.status();
    rates.push_back(result->events_per_second);
    last = *result;
  }
  std::vector<double> sorted = rates;
  std::sort(sorted.begin(), sorted.end());
  std::sort(setup_seconds.begin(), setup_seconds.end());
  const double median = sorted[sorted.size() / 2];
  std::printf(
      "simulator, %lld actors on %d devices (pp %d x dp %d x tp %d), %d steps x %d pieces: "
      "%lld events (%lld firings, %lld messages) per run; Run median %.2f M events/s over %d "
      "runs (min %.2f, max %.2f), %.3f s per run; setup (Create) median %.3f s; compile %.2f s; "
      "busy intervals %s; target > %.1f M events/s: %s\n",
      static_cast<long long>(plan->actor_size()), plan->device_size(), setting.pp, setting.dp,
      setting.tp, setting.steps, setting.micro_batches, static_cast<long long>(last.events),
      static_cast<long long>(last.firings), static_cast<long long>(last.messages), median / 1e6,
      setting.repeats, sorted.front() / 1e6, sorted.back() / 1e6, last.wall_seconds,
      setup_seconds[setup_seconds.size() / 2], compile_seconds, setting.intervals ? "on" : "off",
      setting.target / 1e6, median > setting.target ? "met" : "MISSED");
  std::printf("  predicted: steady step %s, bubble %.1f%% (formula %.1f%%)\n",
              simulator::FormatDuration(last.steady_step_ns).c_str(), 100 * last.bubble_measured,
              100 * last.bubble_formula);
  if (setting.report) std::fputs(simulator::FormatSimulationReport(last).c_str(), stdout);
  return median > setting.target ? 0 : 1;
}

int Main(int argc, char** argv) {
  BenchSetting setting;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--ops")
      setting.ops = value;
    else if (flag == "--pp")
      setting.pp = value;
    else if (flag == "--dp")
      setting.dp = value;
    else if (flag == "--tp")
      setting.tp = value;
    else if (flag == "--steps")
      setting.steps = value;
    else if (flag == "--micro-batches")
      setting.micro_batches = value;
    else if (flag == "--repeats")
      setting.repeats = std::max(1, value);
    else if (flag == "--intervals")
      setting.intervals = value != 0;
    else if (flag == "--report")
      setting.report = value != 0;
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "flags come in pairs: --name value\n");
    return 2;
  }
  return Run(setting);
}

}  // namespace
}  // namespace softwire

int main(int argc, char** argv) {
  return softwire::Main(argc, argv);
}
