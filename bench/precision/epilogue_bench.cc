// epilogue_bench: what product epilogues (docs/OPS.md "fused", docs/KERNELS.md) save in one
// training step of a job, kernels alone. It compiles the job twice as `softwire run` does
// (--precision float32 or bf16): with product epilogues (the default) and with
// --no-epilogues. Each fused actor of the first plan whose program starts with a product is a
// site; the second plan computes the same site with two actors, the product (named after the
// site's first member) and its element-wise chain (the other members joined by '+'). Each
// round runs every site's fused kernel, then every site's two kernels, back to back on a
// 2-thread pool with BLAS on the calling threads, as often as they fire in a step; rounds
// alternate the two orders. No actors, no messages.
//
//   epilogue_bench JOB [--precision float32|bf16] [--steps 40] [--threads 2]
//
// Prints one JSON line: {"job", "precision", "sites", "folded_ms", "unfolded_ms", "saved_ms",
// "ratio"}, medians over --steps rounds after 3 warm-up rounds (ratio: unfolded / folded).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/precision/actor_kernel.h"
#include "compiler/compiler.h"
#include "proto/tensor_desc.h"
#include "runtime/device/cpu/thread_pool_runner.h"
#include "runtime/kernels/cpu/cpu_kernels.h"

namespace softwire {
namespace runtime {
namespace {

bool IsProductEpilogue(const proto::ActorDef& actor) {
  if (actor.kernel().op_type() != "fused") return false;
  for (const proto::Attribute& attribute : actor.kernel().attr()) {
    if (attribute.name() == "program") return attribute.string().rfind("t0 = matmul(", 0) == 0;
  }
  return false;
}

proto::Plan CompileWith(const compiler::JobFile& job, proto::Precision precision, bool epilogues) {
  compiler::CompileOptions options;
  options.steps = 1;
  options.precision = precision;
  options.fuse_epilogues = epilogues;
  StatusOr<proto::Plan> plan = compiler::CompileJob(job, options);
  CHECK(plan.ok()) << plan.status();
  return *std::move(plan);
}

int Main(int argc, char** argv) {
  const std::optional<KernelBenchFlags> flags =
      ParseKernelBenchFlags(argc, argv, "epilogue_bench", 40, "steps' worth of products timed");
  if (!flags) return 2;
  const std::string& job_path = flags->job_path;
  const std::string& precision = flags->precision;
  const int64_t steps = flags->steps;
  const int64_t threads = flags->threads;
  StatusOr<compiler::JobFile> job = compiler::ParseJobFile(job_path);
  CHECK(job.ok()) << job.status();
  const proto::Precision type = flags->type;
  const proto::Plan folded_plan = CompileWith(*job, type, true);
  const proto::Plan unfolded_plan = CompileWith(*job, type, false);
  std::map<std::string, const proto::ActorDef*> unfolded_by_name;
  for (const proto::ActorDef& actor : unfolded_plan.actor())
    unfolded_by_name[actor.name()] = &actor;

  RunBlasOnCallingThreads();  // As a NodeRuntime's cpu devices run products.
  ThreadPoolRunner runner(static_cast<int>(threads));
  KernelRegistry registry;
  RegisterCpuKernels(&registry);
  std::vector<ActorKernel> folded;
  std::vector<ActorKernel> unfolded;
  uint64_t seed = 1;
  for (const proto::ActorDef& actor : folded_plan.actor()) {
    if (!IsProductEpilogue(actor)) continue;
    const size_t plus = actor.name().find('+');
    const auto product = unfolded_by_name.find(actor.name().substr(0, plus));
    const auto chain = unfolded_by_name.find(actor.name().substr(plus + 1));
    CHECK(product != unfolded_by_name.end() && chain != unfolded_by_name.end())
        << actor.name() << ": no product and chain of these names without epilogues";
    folded.push_back(PrepareActorKernel(folded_plan, actor, registry, &runner, &seed));
    unfolded.push_back(
        PrepareActorKernel(unfolded_plan, *product->second, registry, &runner, &seed));
    unfolded.push_back(PrepareActorKernel(unfolded_plan, *chain->second, registry, &runner, &seed));
  }
  CHECK(!folded.empty()) << job_path << " has no product epilogue";
  std::vector<double> folded_seconds;
  std::vector<double> unfolded_seconds;
  for (int step = -3; step < steps; ++step) {  // 3 warm-up rounds.
    double with = 0;
    double without = 0;
    if (step % 2 == 0) {
      with = StepSeconds(folded);
      without = StepSeconds(unfolded);
    } else {
      without = StepSeconds(unfolded);
      with = StepSeconds(folded);
    }
    if (step < 0) continue;
    folded_seconds.push_back(with);
    unfolded_seconds.push_back(without);
  }
  const double with = Median(folded_seconds);
  const double without = Median(unfolded_seconds);
  std::printf(
      "{\"job\": \"%s\", \"precision\": \"%s\", \"sites\": %zu, \"folded_ms\": %.4f, "
      "\"unfolded_ms\": %.4f, \"saved_ms\": %.4f, \"ratio\": %.4f}\n",
      folded_plan.job_name().c_str(), precision.c_str(), folded.size(), with * 1e3, without * 1e3,
      (without - with) * 1e3, without / with);
  return 0;
}

}  // namespace
}  // namespace runtime
}  // namespace softwire

int main(int argc, char** argv) {
  return softwire::runtime::Main(argc, argv);
}
