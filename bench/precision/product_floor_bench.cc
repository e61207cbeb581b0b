// product_floor_bench: the products of one training step of a job, timed alone: the floor a
// step's time can reach in that precision. It compiles the job as `softwire run` does
// (--precision float32 or bf16) but without op fusion (so that no product is folded into a
// fused actor), takes every matmul and batch_matmul actor of the plan with its kernel exactly as
// the engine creates it (shapes, transposes, strided views, bfloat16 inputs: oneDNN's bf16
// products where the cpu has them), and runs each as many times as it fires in a step, back
// to back on a 2-thread pool with BLAS on the calling threads, as a cpu device of 2 cores runs
// them. No actors, no element-wise ops, no messages.
//
//   product_floor_bench JOB [--precision float32|bf16] [--steps 20] [--threads 2]
//
// Prints one JSON line: {"job", "precision", "products", "firings_per_step", "ms_per_step",
// "samples_per_second"}, the medians over --steps steps after 3 warm-up steps.
// bench/precision/precision_bench.py runs it beside the training runs it compares.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/random.h"
#include "bench/precision/actor_kernel.h"
#include "compiler/compiler.h"
#include "proto/tensor_desc.h"
#include "runtime/device/cpu/thread_pool_runner.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/testing/kernel_harness.h"

namespace softwire {
namespace runtime {
namespace {

struct Product {
  std::unique_ptr<KernelHarness> harness;
  int64_t firings_per_step = 1;
};

std::vector<Product> Products(const proto::Plan& plan, const KernelRegistry& registry,
                              ParallelRunner* runner) {
  std::vector<Product> products;
  const int64_t pieces = std::max<int64_t>(1, plan.schedule().pieces_per_step());
  uint64_t seed = 1;
  for (const proto::ActorDef& actor : plan.actor()) {
    const std::string& op = actor.kernel().op_type();
    if (op != "matmul" && op != "batch_matmul") continue;
    std::vector<HostTensor> inputs;
    for (const proto::TensorDesc& input : actor.kernel().input()) {
      inputs.push_back(RandomTensor(input, seed++));
    }
    std::vector<HostTensor> outputs;
    for (const proto::TensorDesc& output : actor.kernel().output()) {
      outputs.push_back(HostTensor::Zeros(DTypeOf(output), ShapeOf(output)));
    }
    std::vector<proto::Attribute> attributes(actor.kernel().attr().begin(),
                                             actor.kernel().attr().end());
    auto harness =
        std::make_unique<KernelHarness>(op, attributes, std::move(inputs), std::move(outputs));
    const Status created = harness->Create(registry);
    CHECK(created.ok()) << actor.name() << ": " << created;
    harness->PrepareContext(runner);
    products.push_back({std::move(harness), pieces / std::max<int64_t>(1, actor.period())});
  }
  return products;
}

int Main(int argc, char** argv) {
  const std::optional<KernelBenchFlags> flags = ParseKernelBenchFlags(
      argc, argv, "product_floor_bench", 20, "steps' worth of products timed");
  if (!flags) return 2;
  const std::string& job_path = flags->job_path;
  const std::string& precision = flags->precision;
  const int64_t steps = flags->steps;
  const int64_t threads = flags->threads;
  StatusOr<compiler::JobFile> job = compiler::ParseJobFile(job_path);
  CHECK(job.ok()) << job.status();
  compiler::CompileOptions options;
  options.steps = 1;
  options.precision = flags->type;
  // Unfused, so that every product is a matmul or batch_matmul actor of its own (fusion folds
  // element-wise chains into the products that feed them; the floor is the products alone).
  options.fuse_elementwise = false;
  StatusOr<proto::Plan> plan = compiler::CompileJob(*job, options);
  CHECK(plan.ok()) << plan.status();

  RunBlasOnCallingThreads();  // As a NodeRuntime's cpu devices run products.
  ThreadPoolRunner runner(static_cast<int>(threads));
  KernelRegistry registry;
  RegisterCpuKernels(&registry);
  std::vector<Product> products = Products(*plan, registry, &runner);
  int64_t firings = 0;
  for (const Product& product : products) firings += product.firings_per_step;
  std::vector<double> step_seconds;
  for (int step = -3; step < steps; ++step) {  // 3 warm-up steps.
    const auto begin = std::chrono::steady_clock::now();
    for (Product& product : products) {
      for (int64_t firing = 0; firing < product.firings_per_step; ++firing) {
        const Status status = product.harness->RunPrepared();
        CHECK(status.ok()) << status;
      }
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (step >= 0) step_seconds.push_back(seconds);
  }
  std::sort(step_seconds.begin(), step_seconds.end());
  const double median = step_seconds[step_seconds.size() / 2];
  const double samples =
      static_cast<double>(plan->schedule().micro_batch_size() *
                          std::max<int64_t>(1, plan->schedule().pieces_per_step()));
  std::printf(
      "{\"job\": \"%s\", \"precision\": \"%s\", \"products\": %zu, \"firings_per_step\": %lld, "
      "\"ms_per_step\": %.4f, \"samples_per_second\": %.1f}\n",
      plan->job_name().c_str(), precision.c_str(), products.size(), static_cast<long long>(firings),
      median * 1e3, samples / median);
  return 0;
}

}  // namespace
}  // namespace runtime
}  // namespace softwire

int main(int argc, char** argv) {
  return softwire::runtime::Main(argc, argv);
}
