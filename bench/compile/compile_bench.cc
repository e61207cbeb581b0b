// Compile-time benchmark (bench/compile/README.md): how long CompileJob takes for synthetic
// jobs of thousands of ops on tens to hundreds of devices, with a breakdown by pass.
//
// The job is a deep residual stack, transformer-like without attention: every block is
//   layer_norm -> matmul (C x 4C) -> bias_add -> gelu -> matmul (4C x C) -> bias_add -> add
// (7 ops, 6 variables), after an input projection and before a classifier head and loss.
// Training with Adam, several micro-batches per step, on a `sim` cluster with pp x dp x tp
// devices.
//
//   build/bench/compile/compile_bench            # both sizes, targets < 2 s and < 10 s
//   build/bench/compile/compile_bench --ops 10000 --pp 16 --dp 4 --tp 4 --repeats 1 --target 10
//   build/bench/compile/compile_bench --ops 19 --pp 1 --dp 4 --tp 2 --explain 1   # the placement
//   build/bench/compile/compile_bench ... --greedy 1   # the greedy sbp choice, to compare
//
// Prints CompileJob's median wall time over the repeats and the compiling thread's CPU time
// (user + system, which load does not inflate), then one more run's per-pass times, wall and
// CPU (compiler::PassManager timings: the pass's and the verification's after it; the freeing
// of the compilation is in CompileJob's time but in no pass's).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/common/synthetic_job.h"
#include "compiler/compilation.h"
#include "compiler/compiler.h"
#include "compiler/ops/op_registry.h"
#include "compiler/pass_manager.h"
#include "compiler/passes/passes.h"
#include "placement/cluster_spec.h"

namespace softwire {
namespace {

struct BenchSetting {
  int ops = 2000;
  int pp = 8;
  int dp = 4;
  int tp = 2;
  int repeats = 5;
  double target_seconds = 2;
  bool explain = false;  // Print compiler::ExplainPlacement instead of timing.
  bool greedy = false;   // --sbp-search greedy instead of the global search.
  int batch = 32;        // Rows per micro-batch.
  int width = 256;
};

struct Run {
  std::vector<compiler::PassTiming> timings;
  int64_t actors = 0;
  int64_t registers = 0;
  std::string kinds;  // "compute 64000, copy ..."
};

double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

struct CompileTime {
  double wall_seconds = 0;
  double cpu_seconds = 0;  // The compiling thread's, user and system: what load does not inflate.
};

// CompileJob's wall and CPU time, start to plan in hand (the compilation's own data freed).
CompileTime TimeCompileJob(const compiler::JobFile& job_file,
                           const compiler::CompileOptions& options) {
  auto start = std::chrono::steady_clock::now();
  const double cpu_start = ThreadCpuSeconds();
  StatusOr<proto::Plan> plan = compiler::CompileJob(job_file, options);
  CompileTime time;
  time.cpu_seconds = ThreadCpuSeconds() - cpu_start;
  time.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!plan.ok()) {
    std::fprintf(stderr, "compile failed: %s\n", plan.status().message().c_str());
    std::exit(1);
  }
  return time;
}

// One more run through the passes one by one, for their times and the plan's make-up.
Run CompileOnce(const compiler::JobFile& job_file, const compiler::CompileOptions& options) {
  const compiler::OpRegistry registry = compiler::MakeStandardOps();
  Run run;
  auto owned = std::make_unique<compiler::Compilation>(job_file, options, registry);
  compiler::Compilation& compilation = *owned;
  Status status = compiler::PassManager(compiler::StandardPasses()).Run(compilation, &run.timings);
  if (!status.ok()) {
    std::fprintf(stderr, "compile failed: %s\n", status.message().c_str());
    std::exit(1);
  }
  run.actors = compilation.plan->actor_size();
  run.registers = compilation.plan->register_def_size();
  std::map<std::string, int64_t> kinds;
  for (const proto::ActorDef& actor : compilation.plan->actor()) {
    ++kinds[proto::ActorKind_Name(actor.kind()).substr(11)];
  }
  for (const auto& [kind, count] : kinds) {
    run.kinds += (run.kinds.empty() ? "" : ", ") + kind + " " + std::to_string(count);
  }
  int64_t per_step_transfers = 0;
  for (const compiler::TaskDef& task : compilation.tasks.tasks()) {
    if (task.logical_op < 0 && task.period > 1) ++per_step_transfers;
  }
  run.kinds += "; of the copy and boxing actors, per step: " + std::to_string(per_step_transfers);
  std::map<std::string, int> edges;
  for (const compiler::BoxingEdge& edge : compilation.boxing) {
    const bool per_step = compilation.graph.tensor(edge.tensor).period > 1;
    ++edges[std::string(per_step ? "per step " : "per piece ") +
            (edge.bucket >= 0 ? "bucketed " : "") + edge.plan.Describe()];
  }
  run.kinds += "\n  boxing edges:";
  for (const auto& [what, count] : edges)
    run.kinds += " " + what + " " + std::to_string(count) + ";";
  run.kinds += " gradient buckets " + std::to_string(compilation.gradient_buckets.size());
  const compiler::SbpSearchReport& sbp = compilation.sbp_search;
  char line[200];
  std::snprintf(line, sizeof(line),
                "\n  sbp choice %s: estimated %.4g ms per piece (greedy %.4g ms), %d ops changed",
                sbp.method.c_str(), sbp.chosen_seconds * 1e3, sbp.greedy_seconds * 1e3,
                sbp.ops_changed);
  run.kinds += line;
  const compiler::DeadlockCheckReport& deadlock = compilation.deadlock_check;
  std::snprintf(line, sizeof(line), "\n  check_deadlock simulated %lld of %lld tasks, %lld firings",
                static_cast<long long>(deadlock.simulated_tasks),
                static_cast<long long>(deadlock.tasks),
                static_cast<long long>(deadlock.simulated_firings));
  run.kinds += line;
  if (!deadlock.whole_because.empty()) run.kinds += " (whole: " + deadlock.whole_because + ")";
  // Freeing, in parts: the emitted plan (which CompileJob hands to its caller instead), the task
  // graph, and the rest.
  const double cpu_before_freeing = ThreadCpuSeconds();
  compilation.plan.reset();
  const double cpu_plan_freed = ThreadCpuSeconds();
  compiler::TaskGraph().mutable_tasks().swap(compilation.tasks.mutable_tasks());
  compiler::TaskGraph().mutable_registers().swap(compilation.tasks.mutable_registers());
  const double cpu_tasks_freed = ThreadCpuSeconds();
  owned.reset();
  const double cpu_freed = ThreadCpuSeconds();
  std::snprintf(line, sizeof(line),
                "\n  freeing the compilation: %.0f ms of CPU (the plan %.0f, the task graph %.0f, "
                "the rest %.0f)",
                (cpu_freed - cpu_before_freeing) * 1e3, (cpu_plan_freed - cpu_before_freeing) * 1e3,
                (cpu_tasks_freed - cpu_plan_freed) * 1e3, (cpu_freed - cpu_tasks_freed) * 1e3);
  run.kinds += line;
  return run;
}

bool Bench(const BenchSetting& setting) {
  compiler::JobFile job_file;
  job_file.job = bench::SyntheticJob(setting.ops, setting.batch, setting.width);
  compiler::CompileOptions options;
  const int per_node = setting.dp * setting.tp;
  StatusOr<proto::Cluster> cluster = placement::ParseClusterShorthand(
      std::to_string(setting.pp) + "x" + std::to_string(per_node) + "sim", 2);
  options.cluster = *cluster;
  options.parallel.set_data_parallel(setting.dp);
  options.parallel.set_tensor_parallel(setting.tp);
  options.parallel.set_pipeline_stages(setting.pp);
  if (setting.greedy) options.sbp_search = compiler::SbpSearchMethod::kGreedy;
  if (setting.explain) {
    StatusOr<std::string> text = compiler::ExplainPlacement(job_file, options);
    std::printf("%s", text.ok() ? text->c_str() : text.status().message().c_str());
    return true;
  }
  std::vector<double> seconds;
  std::vector<double> cpu_seconds;
  for (int i = 0; i < setting.repeats; ++i) {
    const CompileTime time = TimeCompileJob(job_file, options);
    seconds.push_back(time.wall_seconds);
    cpu_seconds.push_back(time.cpu_seconds);
  }
  std::sort(seconds.begin(), seconds.end());
  std::sort(cpu_seconds.begin(), cpu_seconds.end());
  const double median = seconds[seconds.size() / 2];
  const double median_cpu = cpu_seconds[cpu_seconds.size() / 2];
  const Run run = CompileOnce(job_file, options);
  const int devices = setting.pp * per_node;
  std::printf(
      "CompileJob, %d job ops on %d devices (pp %d x dp %d x tp %d): median %.3f s over "
      "%d runs (min %.3f, max %.3f); %lld actors, %lld registers; target < %.0f s: %s\n",
      job_file.job.op_size(), devices, setting.pp, setting.dp, setting.tp, median, setting.repeats,
      seconds.front(), seconds.back(), static_cast<long long>(run.actors),
      static_cast<long long>(run.registers), setting.target_seconds,
      median < setting.target_seconds ? "met" : "MISSED");
  std::printf("  CPU time of the compiling thread: median %.3f s (min %.3f, max %.3f)\n",
              median_cpu, cpu_seconds.front(), cpu_seconds.back());
  std::printf(
      "  actors by kind: %s\n  passes (wall ms; CPU ms of the pass + of the verification "
      "after it):",
      run.kinds.c_str());
  double pass_cpu = 0;
  double verify_cpu = 0;
  for (const compiler::PassTiming& timing : run.timings) {
    pass_cpu += timing.cpu_milliseconds;
    verify_cpu += timing.verify_cpu_milliseconds;
    if (timing.milliseconds >= 1 || timing.cpu_milliseconds + timing.verify_cpu_milliseconds >= 1)
      std::printf(" %s %.0f (%.0f + %.0f);", timing.name.c_str(), timing.milliseconds,
                  timing.cpu_milliseconds, timing.verify_cpu_milliseconds);
  }
  std::printf("\n  CPU ms in passes %.0f, in verification %.0f\n", pass_cpu, verify_cpu);
  return median < setting.target_seconds;
}

int Main(int argc, char** argv) {
  std::vector<BenchSetting> settings;
  BenchSetting custom;
  bool has_custom = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    has_custom = true;
    if (flag == "--ops")
      custom.ops = value;
    else if (flag == "--pp")
      custom.pp = value;
    else if (flag == "--dp")
      custom.dp = value;
    else if (flag == "--tp")
      custom.tp = value;
    else if (flag == "--repeats")
      custom.repeats = value;
    else if (flag == "--target")
      custom.target_seconds = value;
    else if (flag == "--explain")
      custom.explain = value != 0;
    else if (flag == "--greedy")
      custom.greedy = value != 0;
    else if (flag == "--batch")
      custom.batch = value;
    else if (flag == "--width")
      custom.width = value;
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (has_custom) {
    settings.push_back(custom);
  } else {
    settings.push_back({2000, 8, 4, 2, 5, 2});
    settings.push_back({10000, 16, 16, 1, 3, 10});
  }
  bool met = true;
  for (const BenchSetting& setting : settings) met &= Bench(setting);
  return met ? 0 : 1;
}

}  // namespace
}  // namespace softwire

int main(int argc, char** argv) {
  return softwire::Main(argc, argv);
}
