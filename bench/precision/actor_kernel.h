// A plan actor's kernel on its own, for the benches that time kernels apart from the engine
// (epilogue_bench, fusion_bench, product_floor_bench): random inputs of the kernel's shapes and
// types, zeroed outputs, run through runtime/kernels/testing's KernelHarness on a runner.
#ifndef SOFTWIRE_BENCH_PRECISION_ACTOR_KERNEL_H_
#define SOFTWIRE_BENCH_PRECISION_ACTOR_KERNEL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proto/plan.pb.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/testing/kernel_harness.h"

namespace softwire {
namespace runtime {

// The flags the three benches share: `NAME JOB [--precision float32|bf16] [--steps N]
// [--threads N]`.
struct KernelBenchFlags {
  std::string job_path;
  std::string precision = "float32";  // As given: "float32" or "bf16".
  proto::Precision type = proto::PRECISION_FLOAT32;
  int64_t steps = 0;
  int64_t threads = 2;
};

// Parses argv; on a bad flag, a JOB missing or extra, an unknown precision or a count under 1,
// prints why and the usage of `name` to stderr and returns nothing.
std::optional<KernelBenchFlags> ParseKernelBenchFlags(int argc, char** argv, const char* name,
                                                      int64_t default_steps,
                                                      const char* steps_help);

// A tensor of `desc`'s shape and type (float32 or bfloat16) of normal values x 0.5, from `seed`.
HostTensor RandomTensor(const proto::TensorDesc& desc, uint64_t seed);

struct ActorKernel {
  std::unique_ptr<KernelHarness> harness;
  int64_t firings_per_step = 1;  // The plan's pieces per step over the actor's period.
};

// `actor`'s kernel of `plan`, created from `registry` and prepared on `runner`, its inputs drawn
// from seeds *seed, *seed + 1, ... (advanced past them). CHECK-fails naming the actor.
ActorKernel PrepareActorKernel(const proto::Plan& plan, const proto::ActorDef& actor,
                               const KernelRegistry& registry, ParallelRunner* runner,
                               uint64_t* seed);

// Seconds to run every kernel's firings of one step, in order.
double StepSeconds(std::vector<ActorKernel>& kernels);

// The median of `values` (the upper one of an even count).
double Median(std::vector<double> values);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_BENCH_PRECISION_ACTOR_KERNEL_H_
