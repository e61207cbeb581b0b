// Predicted against measured: the simulator's steady step time for a plan on 8 sim devices
// beside the step time the CAF runtime measures running the same plan on its `sim` devices,
// whose kernels take ActorDef.estimated_seconds of real time (bench/simulator/README.md).
// Target: within 5%.
//
//   build/bench/simulator/sim_vs_runtime                         # synthetic job, pp 4 x dp 2
//   build/bench/simulator/sim_vs_runtime --job tests/compiler/jobs/mlp.pbtxt --pp 4 --dp 2
//   build/bench/simulator/sim_vs_runtime --step-ms 500 --steps 10 --message-us 2
//
// Both engines run one plan. Its estimates are first scaled so that a step, as the simulator
// predicts it with messages taking no time, lasts --step-ms (default 200 ms): the cost
// model's estimates for sim devices are microseconds, where the runtime's per-message
// overhead and its timers' resolution, not the plan, would set the pace. Exit codes: 0 within
// 5%, 1 outside (or the run failed), 2 bad input.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/common/synthetic_job.h"
#include "compiler/compiler.h"
#include "placement/cluster_spec.h"
#include "runtime/host/job_runner.h"
#include "simulator/simulation_report.h"
#include "simulator/simulator.h"

namespace softwire {
namespace {

struct Setting {
  std::string job;  // Empty: the synthetic job.
  int ops = 40;
  std::string cluster = "8sim";
  int pp = 4;
  int dp = 2;
  int tp = 1;
  int micro_batches = 8;
  int steps = 10;
  double step_ms = 200;
  double message_us = 1;
  int worker_spin_us = -1;  // < 0: the runtime's default for the plan.
};

// Multiplies every estimate so the simulator, with messages free, predicts steps of
// `step_seconds`; returns the factor.
StatusOr<double> ScaleEstimates(double step_seconds, proto::Plan* plan) {
  simulator::SimulationOptions free_messages;
  free_messages.latency.message_ns = 0;
  free_messages.latency.inter_node_ns = 0;
  free_messages.record_busy_intervals = false;
  SOFTWIRE_ASSIGN_OR_RETURN(simulator::SimulationResult unscaled,
                            simulator::Simulate(*plan, free_messages));
  const double predicted = simulator::SimTimeToSeconds(unscaled.steady_step_ns);
  if (predicted <= 0 || step_seconds <= 0) return 1.0;
  const double scale = step_seconds / predicted;
  for (proto::ActorDef& actor : *plan->mutable_actor()) {
    actor.set_estimated_seconds(actor.estimated_seconds() * scale);
  }
  return scale;
}

StatusOr<proto::Plan> CompilePlan(const Setting& setting) {
  compiler::JobFile job_file;
  if (setting.job.empty()) {
    job_file.job = bench::SyntheticJob(setting.ops, 32, 256);
  } else {
    SOFTWIRE_ASSIGN_OR_RETURN(job_file, compiler::ParseJobFile(setting.job));
  }
  compiler::CompileOptions options;
  SOFTWIRE_ASSIGN_OR_RETURN(options.cluster, placement::LoadClusterSpec(setting.cluster));
  options.parallel.set_pipeline_stages(setting.pp);
  options.parallel.set_data_parallel(setting.dp);
  options.parallel.set_tensor_parallel(setting.tp);
  options.micro_batches_per_step = setting.micro_batches;
  options.steps = setting.steps;
  return compiler::CompileJob(job_file, options);
}

int Compare(const Setting& setting) {
  StatusOr<proto::Plan> plan = CompilePlan(setting);
  if (!plan.ok()) {
    std::fprintf(stderr, "compile failed: %s\n", plan.status().message().c_str());
    return 2;
  }
  StatusOr<double> scale = ScaleEstimates(setting.step_ms * 1e-3, &*plan);
  if (!scale.ok()) {
    std::fprintf(stderr, "simulation failed: %s\n", scale.status().message().c_str());
    return 2;
  }
  simulator::SimulationOptions options;
  options.latency.message_ns = simulator::SecondsToSimTime(setting.message_us * 1e-6);
  StatusOr<simulator::SimulationResult> simulated = simulator::Simulate(*plan, options);
  if (!simulated.ok()) {
    std::fprintf(stderr, "simulation failed: %s\n", simulated.status().message().c_str());
    return 2;
  }
  const double predicted = simulator::SimTimeToSeconds(simulated->steady_step_ns);
  std::printf(
      "plan '%s': %d actors on %d devices (pp %d x dp %d x tp %d), %d steps x %d "
      "pieces, estimates scaled x%.3g\n",
      plan->job_name().c_str(), plan->actor_size(), plan->device_size(), setting.pp, setting.dp,
      setting.tp, setting.steps, setting.micro_batches, *scale);
  std::printf("simulator: steady step %s (%lld events in %.3f s)\n",
              simulator::FormatDuration(simulated->steady_step_ns).c_str(),
              static_cast<long long>(simulated->events), simulated->wall_seconds);

  runtime::RunOptions run_options;
  run_options.stall_timeout_seconds = 60;
  run_options.caf.worker_spin_us = setting.worker_spin_us;
  StatusOr<runtime::RunResult> measured = runtime::RunPlan(*plan, run_options);
  if (!measured.ok()) {
    std::fprintf(stderr, "runtime failed: %s\n", measured.status().message().c_str());
    return 1;
  }
  // The runtime's steady step: the mean of every step but the first, as the simulator's.
  double sum = 0;
  int count = 0;
  for (const runtime::StepResult& step : measured->steps) {
    if (step.step == 0 && measured->steps.size() > 1) continue;
    sum += step.seconds;
    ++count;
  }
  const double actual = count > 0 ? sum / count : measured->seconds;
  const double error = std::abs(predicted - actual) / actual;
  std::printf("runtime: steady step %s (%.3f s for the run)\n",
              simulator::FormatDuration(simulator::SecondsToSimTime(actual)).c_str(),
              measured->seconds);
  std::printf("prediction error %.2f%%; target within 5%%: %s\n", 100 * error,
              error <= 0.05 ? "met" : "MISSED");
  return error <= 0.05 ? 0 : 1;
}

int Main(int argc, char** argv) {
  Setting setting;
  if (argc % 2 == 0) {
    std::fprintf(stderr, "flags come in pairs: --name value\n");
    return 2;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--job")
      setting.job = value;
    else if (flag == "--ops")
      setting.ops = std::atoi(value.c_str());
    else if (flag == "--cluster")
      setting.cluster = value;
    else if (flag == "--pp")
      setting.pp = std::atoi(value.c_str());
    else if (flag == "--dp")
      setting.dp = std::atoi(value.c_str());
    else if (flag == "--tp")
      setting.tp = std::atoi(value.c_str());
    else if (flag == "--micro-batches")
      setting.micro_batches = std::atoi(value.c_str());
    else if (flag == "--steps")
      setting.steps = std::atoi(value.c_str());
    else if (flag == "--step-ms")
      setting.step_ms = std::atof(value.c_str());
    else if (flag == "--message-us")
      setting.message_us = std::atof(value.c_str());
    else if (flag == "--worker-spin-us")
      setting.worker_spin_us = std::atoi(value.c_str());
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  return Compare(setting);
}

}  // namespace
}  // namespace softwire

int main(int argc, char** argv) {
  return softwire::Main(argc, argv);
}
