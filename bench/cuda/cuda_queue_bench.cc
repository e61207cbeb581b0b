// cuda_queue_bench: what a firing costs on a cuda device's queue, and the product rate the
// queue's matmul kernel reaches against cuBLAS called directly, on the MLP's shapes.
//
//   build/bench/cuda/cuda_queue_bench [--firings 20000] [--repeats 5]
//
// 1. A chain of tiny launches (fill of 256 floats) through CudaStreamQueue with k launches
//    outstanding (k = 1, 2, 4, 8, 16: what max_in_flight k allows one actor), the host
//    launching the next on each completion, as an actor does. Peers measured in the same run:
//    the same kernel launched raw with a cudaStreamSynchronize after each (one host round trip
//    per launch) and launched back to back with one synchronize at the end (the device's own
//    rate). Wall time per firing, median of the repeats.
// 2. The 4x4096 MLP's products at batch 512 (forward x W, backward dY W^T and X^T dY) through
//    the cuda matmul kernel on the queue, against cublasSgemm on the same shapes and stream, TF32
//    off (the default) and on: TFLOP/s, median of the repeats.
// Without a GPU it says why and exits 0 (nothing to measure).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "cli/flag_parser.h"
#include "runtime/device/cuda/cuda_device.h"
#include "runtime/kernels/cuda/cuda_kernels.h"
#include "runtime/kernels/cuda/cuda_launchers.h"
#include "runtime/kernels/testing/kernel_harness.h"

namespace softwire {
namespace runtime {
namespace {

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Counts completions; the driver waits for the count to reach a target.
class CountingListener final : public LaunchListener {
 public:
  void OnLaunchCompleted(int64_t, int64_t, Status status) override {
    if (!status.ok()) std::fprintf(stderr, "launch failed: %s\n", status.ToString().c_str());
    std::lock_guard<std::mutex> lock(mutex_);
    ++completed_;
    changed_.notify_one();
  }
  void WaitFor(int64_t count) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return completed_ >= count; });
  }
  void Reset() { completed_ = 0; }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int64_t completed_ = 0;
};

struct Launcher {
  CudaDevice* device;
  DeviceQueue* queue;
  Kernel* kernel;
  std::vector<KernelContext> contexts;  // One per firing in flight.
};

// Seconds for `firings` launches with at most `in_flight` outstanding.
double ChainSeconds(Launcher& launcher, int64_t firings, int in_flight) {
  CountingListener listener;
  std::atomic<bool> stopping{false};
  std::vector<LaunchRequest> requests(static_cast<size_t>(in_flight));
  const Clock::time_point begin = Clock::now();
  for (int64_t firing = 0; firing < firings; ++firing) {
    if (firing >= in_flight) listener.WaitFor(firing - in_flight + 1);
    LaunchRequest& request = requests[static_cast<size_t>(firing % in_flight)];
    request.actor = 0;
    request.firing = firing;
    request.kernel = launcher.kernel;
    request.context = &launcher.contexts[static_cast<size_t>(firing % in_flight)];
    request.listener = &listener;
    request.stopping = &stopping;
    Status unused;
    launcher.queue->Launch(request, &unused);
  }
  listener.WaitFor(firings);
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

int Main(int argc, char** argv) {
  int64_t firings = 20000;
  int64_t repeats = 5;
  cli::FlagParser flags;
  flags.AddInt("firings", &firings, "N", "launches per measurement");
  flags.AddInt("repeats", &repeats, "R", "measurements per figure (the median is printed)");
  std::vector<std::string> positional;
  Status parsed = flags.Parse(std::vector<std::string>(argv + 1, argv + argc), &positional);
  if (parsed.ok() && (firings < 1 || repeats < 1 || !positional.empty())) {
    parsed = InvalidArgumentError("--firings and --repeats must be >= 1; no other arguments");
  }
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s\n", parsed.ToString().c_str());
    return 2;
  }
  proto::PlanDevice plan_device;
  plan_device.set_node("node0");
  plan_device.set_name("cuda:0");
  plan_device.set_kind(proto::DEVICE_KIND_CUDA);
  Status usable = CheckCudaDevice("node0/cuda:0", 0);
  if (!usable.ok()) {
    std::printf("nothing to measure: %s\n", usable.ToString().c_str());
    return 0;
  }
  cudaDeviceProp properties;
  cudaGetDeviceProperties(&properties, 0);
  std::printf("GPU: %s, %d multiprocessors\n", properties.name, properties.multiProcessorCount);

  KernelRegistry kernels;
  RegisterCudaKernels(&kernels);
  for (bool tf32 : {false, true}) {
    DeviceOptions options;
    options.cuda_allow_tf32 = tf32;
    StatusOr<std::unique_ptr<CudaDevice>> device =
        CudaDevice::Create(plan_device, 1, options, &kernels);
    if (!device.ok()) {
      std::fprintf(stderr, "%s\n", device.status().ToString().c_str());
      return 1;
    }
    DeviceQueue* queue = *(*device)->queue(0);
    cudaStream_t stream = static_cast<CudaStreamQueue*>(queue)->stream();
    if (!tf32) {
      // Part 1: launches.
      KernelHarness fill("fill", {IntsAttribute("shape", {256}), FloatAttribute("value", 1)}, {},
                         {HostTensor::Zeros(DType::kFloat32, {256})});
      KernelSetup setup;
      setup.plan = &fill.plan();
      setup.actor = &fill.actor();
      std::unique_ptr<Kernel> kernel = std::move(kernels.Create(setup)).value();
      std::unique_ptr<DeviceArena> arena = std::move((*device)->AllocateArena(1024)).value();
      KernelContext context = (*device)->NewKernelContext(/*queue=*/0);
      TensorView view = fill.output(0).View();
      view.data = arena->base();
      context.outputs.push_back(view);
      context.output_fill_begins.push_back(true);
      std::printf("\nper launch of a 256-float fill, %lld launches, median of %d:\n",
                  static_cast<long long>(firings), static_cast<int>(repeats));
      std::vector<double> synced;
      std::vector<double> async;
      for (int r = 0; r < repeats; ++r) {
        Clock::time_point begin = Clock::now();
        for (int64_t i = 0; i < firings; ++i) {
          cuda::Fill(reinterpret_cast<float*>(arena->base()), 1.0f, 256, stream);
          cudaStreamSynchronize(stream);
        }
        synced.push_back(std::chrono::duration<double>(Clock::now() - begin).count());
        begin = Clock::now();
        for (int64_t i = 0; i < firings; ++i)
          cuda::Fill(reinterpret_cast<float*>(arena->base()), 1.0f, 256, stream);
        cudaStreamSynchronize(stream);
        async.push_back(std::chrono::duration<double>(Clock::now() - begin).count());
      }
      std::printf("  raw launch + cudaStreamSynchronize each: %.2f us\n",
                  Median(synced) / firings * 1e6);
      std::printf("  raw launches back to back:               %.2f us\n",
                  Median(async) / firings * 1e6);
      for (int k : {1, 2, 4, 8, 16}) {
        Launcher launcher{device->get(), queue, kernel.get(),
                          std::vector<KernelContext>(static_cast<size_t>(k), context)};
        std::vector<double> seconds;
        for (int r = 0; r < repeats; ++r) seconds.push_back(ChainSeconds(launcher, firings, k));
        std::printf("  queue, %2d in flight:                     %.2f us\n", k,
                    Median(seconds) / firings * 1e6);
      }
    }
    // Part 2: products.
    std::printf("\nMLP products at batch 512, width 4096, TF32 %s, median of %d:\n",
                tf32 ? "on" : "off", static_cast<int>(repeats));
    struct Shape3 {
      const char* name;
      bool ta, tb;
      int64_t m, n, k;
    };
    const Shape3 shapes[] = {{"x W      [512,4096]x[4096,4096]", false, false, 512, 4096, 4096},
                             {"dY W^T   [512,4096]x[4096,4096]^T", false, true, 512, 4096, 4096},
                             {"X^T dY   [4096,512]^T x [512,4096]", true, false, 4096, 4096, 512}};
    const int64_t bytes = int64_t{4} * 4096 * 4096 * 3;
    std::unique_ptr<DeviceArena> arena = std::move((*device)->AllocateArena(bytes)).value();
    float* a = reinterpret_cast<float*>(arena->base());
    float* b = a + 4096 * 4096;
    float* c = b + 4096 * 4096;
    cuda::Fill(a, 0.5f, 3 * 4096 * 4096, stream);
    for (const Shape3& s : shapes) {
      Shape a_shape = s.ta ? Shape({s.k, s.m}) : Shape({s.m, s.k});
      Shape b_shape = s.tb ? Shape({s.n, s.k}) : Shape({s.k, s.n});
      KernelHarness matmul("matmul",
                           {BoolAttribute("transpose_a", s.ta), BoolAttribute("transpose_b", s.tb)},
                           {HostTensor::Zeros(DType::kFloat32, a_shape),
                            HostTensor::Zeros(DType::kFloat32, b_shape)},
                           {HostTensor::Zeros(DType::kFloat32, {s.m, s.n})});
      KernelSetup setup;
      setup.plan = &matmul.plan();
      setup.actor = &matmul.actor();
      std::unique_ptr<Kernel> kernel = std::move(kernels.Create(setup)).value();
      KernelContext context = (*device)->NewKernelContext(/*queue=*/0);
      context.inputs = {matmul.input(0).View(), matmul.input(1).View()};
      context.inputs[0].data = a;
      context.inputs[1].data = b;
      context.outputs = {matmul.output(0).View()};
      context.outputs[0].data = c;
      Launcher launcher{device->get(), queue, kernel.get(), std::vector<KernelContext>(2, context)};
      const int64_t products = 50;
      const double flops = 2.0 * s.m * s.n * s.k * products;
      ChainSeconds(launcher, 5, 2);  // Warm-up.
      std::vector<double> queued;
      std::vector<double> raw;
      cublasHandle_t handle;
      cublasCreate(&handle);
      cublasSetStream(handle, stream);
      cublasSetMathMode(handle, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
      const float one = 1;
      const float zero = 0;
      for (int r = 0; r < repeats; ++r) {
        queued.push_back(ChainSeconds(launcher, products, 2));
        Clock::time_point begin = Clock::now();
        for (int64_t i = 0; i < products; ++i) {
          cublasSgemm(handle, s.tb ? CUBLAS_OP_T : CUBLAS_OP_N, s.ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                      static_cast<int>(s.n), static_cast<int>(s.m), static_cast<int>(s.k), &one, b,
                      static_cast<int>(s.tb ? s.k : s.n), a, static_cast<int>(s.ta ? s.m : s.k),
                      &zero, c, static_cast<int>(s.n));
        }
        cudaStreamSynchronize(stream);
        raw.push_back(std::chrono::duration<double>(Clock::now() - begin).count());
      }
      cublasDestroy(handle);
      const double queued_rate = flops / Median(queued) / 1e12;
      const double raw_rate = flops / Median(raw) / 1e12;
      std::printf("  %-36s queue %6.1f TFLOP/s, cublasSgemm %6.1f TFLOP/s, ratio %.3f\n", s.name,
                  queued_rate, raw_rate, queued_rate / raw_rate);
    }
  }
  return 0;
}

}  // namespace
}  // namespace runtime
}  // namespace softwire

int main(int argc, char** argv) {
  return softwire::runtime::Main(argc, argv);
}
