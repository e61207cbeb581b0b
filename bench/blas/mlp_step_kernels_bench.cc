// mlp_step_kernels_bench: the cpu kernels of one training step of the MLP benchmark
// (784-1024-1024-10, batch 256, SGD with momentum), run back to back on one thread with a
// 2-thread ThreadPoolRunner and OpenBLAS on 2 threads, as a cpu device of 2 cores runs them.
// No actors, no messages: this is the floor the engine's step time can reach, and the per-op
// table shows where it goes.
//
//   mlp_step_kernels_bench [--steps=40] [--threads=2] [--blas_threads=N]
//
// --blas_threads defaults to --threads (OpenBLAS threads each product itself); with 1, matmul
// kernels split products over the runner's threads instead (matmul_kernels.cc).
//
// PyTorch 1.13 does the same step in 256 / 12231 s = 20.9 ms (docs/MACHINE.md).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/random.h"
#include "runtime/device/cpu/thread_pool_runner.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/testing/kernel_harness.h"

namespace softwire {
namespace runtime {
namespace {

HostTensor Normal(const Shape& shape, uint64_t seed, float scale) {
  std::vector<float> values(shape.NumElements());
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = scale * static_cast<float>(NormalAt(seed, i));
  }
  return HostTensor::Float(shape, std::move(values));
}

HostTensor Labels(int64_t batch) {
  std::vector<int32_t> values(batch);
  for (int64_t i = 0; i < batch; ++i) values[i] = static_cast<int32_t>(UniformIntAt(9, i, 10));
  return HostTensor::Int(Shape({batch}), std::move(values));
}

HostTensor Zeros(const Shape& shape) {
  return HostTensor::Zeros(DType::kFloat32, shape);
}

struct Step {
  std::string name;
  bool is_matmul;
  std::unique_ptr<KernelHarness> harness;
};

std::vector<Step> BuildStep(const KernelRegistry& registry, ParallelRunner* runner) {
  const int64_t b = 256;
  const std::vector<int64_t> widths = {784, 1024, 1024, 10};
  std::vector<Step> steps;
  auto add = [&](const std::string& name, const std::string& op_type,
                 std::vector<proto::Attribute> attributes, std::vector<HostTensor> inputs,
                 std::vector<HostTensor> outputs, int64_t state_bytes = 0) {
    auto harness =
        std::make_unique<KernelHarness>(op_type, attributes, std::move(inputs), std::move(outputs));
    harness->actor().set_state_bytes(state_bytes);
    Status created = harness->Create(registry);
    CHECK(created.ok()) << name << ": " << created;
    harness->PrepareContext(runner);
    steps.push_back({name, op_type == "matmul", std::move(harness)});
  };
  const auto transpose_a = BoolAttribute("transpose_a", true);
  const auto transpose_b = BoolAttribute("transpose_b", true);
  for (int layer = 0; layer < 3; ++layer) {  // Forward.
    const Shape in({b, widths[layer]});
    const Shape out({b, widths[layer + 1]});
    const std::string l = std::to_string(layer + 1);
    add("fc" + l + " matmul", "matmul", {},
        {Normal(in, 1, 1), Normal(Shape({widths[layer], widths[layer + 1]}), 2, 0.03f)},
        {Zeros(out)});
    add("fc" + l + " bias_add", "bias_add", {},
        {Normal(out, 3, 1), Normal(Shape({out.dim(1)}), 4, 1)}, {Zeros(out)});
    if (layer < 2) add("fc" + l + " relu", "relu", {}, {Normal(out, 5, 1)}, {Zeros(out)});
  }
  const Shape logits({b, 10});
  add("softmax_cross_entropy", "softmax_cross_entropy", {}, {Normal(logits, 6, 1), Labels(b)},
      {Zeros(Shape({b}))});
  add("reduce_mean", "reduce_mean", {}, {Normal(Shape({b}), 7, 1)}, {Zeros(Shape())});
  add("broadcast_axes (mean grad)", "broadcast_axes",
      {IntsAttribute("shape", {b}), IntsAttribute("axes", {0})}, {Normal(Shape(), 8, 1)},
      {Zeros(Shape({b}))});
  add("scale (mean grad)", "scale", {FloatAttribute("factor", 1.0 / b)}, {Normal(Shape({b}), 9, 1)},
      {Zeros(Shape({b}))});
  add("softmax_cross_entropy_grad", "softmax_cross_entropy_grad", {},
      {Normal(Shape({b}), 10, 1), Normal(logits, 11, 1), Labels(b)}, {Zeros(logits)});
  for (int layer = 2; layer >= 0; --layer) {  // Backward.
    const Shape in({b, widths[layer]});
    const Shape out({b, widths[layer + 1]});
    const Shape weight({widths[layer], widths[layer + 1]});
    const std::string l = std::to_string(layer + 1);
    if (layer < 2) {
      add("fc" + l + " relu_grad", "relu_grad", {}, {Normal(out, 12, 1), Normal(out, 13, 1)},
          {Zeros(out)});
    }
    add("fc" + l + " bias_add_grad", "bias_add_grad", {}, {Normal(out, 14, 1)},
        {Zeros(Shape({out.dim(1)}))});
    add("fc" + l + " weight grad", "matmul", {transpose_a}, {Normal(in, 15, 1), Normal(out, 16, 1)},
        {Zeros(weight)});
    if (layer > 0) {
      add("fc" + l + " input grad", "matmul", {transpose_b},
          {Normal(out, 17, 1), Normal(weight, 18, 1)}, {Zeros(in)});
    }
  }
  const std::vector<proto::Attribute> sgd = {FloatAttribute("learning_rate", 0.01),
                                             FloatAttribute("momentum", 0.9)};
  for (int layer = 0; layer < 3; ++layer) {  // Update.
    const std::string l = std::to_string(layer + 1);
    const Shape weight({widths[layer], widths[layer + 1]});
    const Shape bias({widths[layer + 1]});
    add("fc" + l + " sgd_update weight", "sgd_update", sgd,
        {Normal(weight, 19, 1), Normal(weight, 20, 1)}, {}, weight.NumElements() * 4);
    add("fc" + l + " sgd_update bias", "sgd_update", sgd,
        {Normal(bias, 21, 1), Normal(bias, 22, 1)}, {}, bias.NumElements() * 4);
  }
  return steps;
}

int Main(int argc, char** argv) {
  int step_count = 40;
  int threads = 2;
  int blas_threads = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--steps=", 8) == 0) {
      step_count = std::atoi(argv[i] + 8);
    } else if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      threads = std::atoi(argv[i] + 10);
    } else if (std::strncmp(argv[i], "--blas_threads=", 15) == 0) {
      blas_threads = std::atoi(argv[i] + 15);
    } else {
      std::fprintf(stderr,
                   "usage: mlp_step_kernels_bench [--steps=N] [--threads=N] "
                   "[--blas_threads=N]\n");
      return 2;
    }
  }
  SetBlasThreads(blas_threads > 0 ? blas_threads : threads);
  ThreadPoolRunner runner(threads);
  KernelRegistry registry;
  RegisterCpuKernels(&registry);
  std::vector<Step> steps = BuildStep(registry, &runner);
  std::vector<std::vector<double>> seconds(steps.size());
  std::vector<double> totals;
  for (int iteration = -5; iteration < step_count; ++iteration) {  // 5 warm-up steps.
    auto step_begin = std::chrono::steady_clock::now();
    for (size_t i = 0; i < steps.size(); ++i) {
      auto begin = std::chrono::steady_clock::now();
      Status status = steps[i].harness->RunPrepared();
      CHECK(status.ok()) << status;
      double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      if (iteration >= 0) seconds[i].push_back(elapsed);
    }
    double total =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - step_begin).count();
    if (iteration >= 0) totals.push_back(total);
  }
  auto median = [](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
  };
  std::printf("%-30s %10s\n", "kernel", "median us");
  double gemm = 0;
  double other = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const double us = median(seconds[i]) * 1e6;
    (steps[i].is_matmul ? gemm : other) += us;
    std::printf("%-30s %10.1f\n", steps[i].name.c_str(), us);
  }
  const double step_ms = median(totals) * 1e3;
  std::printf("%-30s %10.1f\n%-30s %10.1f\n", "sum of matmul medians", gemm, "sum of other medians",
              other);
  std::printf("step (median of %d): %.2f ms = %.0f samples/s; PyTorch 20.93 ms = 12231 samples/s\n",
              step_count, step_ms, 256 / (step_ms / 1e3));
  return 0;
}

}  // namespace
}  // namespace runtime
}  // namespace softwire

int main(int argc, char** argv) {
  return softwire::runtime::Main(argc, argv);
}
