// oneDNN 2.6's filter gradient (backward weights) on ResNet-20's shapes, NHWC images, float32
// and bf16, batch 64, made and run four ways (docs/DECISIONS.md, "Filter gradients"):
//
//   one        two lanes of 32 on two threads, each primitive made for one thread (omp 1 when
//              created) and run on its thread, the lanes' gradients summed: the engine now
//   cores      the same, the primitives made while omp_get_max_threads() was the machine's
//              cores (OpenMP's default): the engine before; each lane opens an OpenMP team
//   whole-1    the whole batch, one primitive made for and run on one thread
//   whole-2    the whole batch, one primitive made for and run on 2 OpenMP threads: oneDNN's own
//              threading, as PyTorch runs it
//
// Prints per shape and way the median milliseconds per call (wall) and the process's CPU
// milliseconds per call (user + system: spinning threads show here), the sums over the
// network (each shape times its count in ResNet-20), and whether whole-2's gradient has the
// same bits as whole-1's (oneDNN's sum order depends on the threads it was made for when it is
// not). The CPU model first.
//
//   build/bench/conv/filter_gradient_threads_bench [--repeats 15]
#include <omp.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Type = memory::data_type;

struct ConvShape {
  const char* name;
  int in_channels, out_channels, size, kernel, stride, count;  // count: how many in ResNet-20.
};

constexpr int kBatch = 64;

double CpuSeconds() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 + usage.ru_stime.tv_sec +
         usage.ru_stime.tv_usec * 1e-6;
}

std::string CpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

// One backward-weights primitive over `count` images with its operands, made while the calling
// thread's OpenMP thread count is `threads`.
struct FilterGradient {
  dnnl::convolution_backward_weights primitive;
  memory x, dy, dw;
};

FilterGradient Make(const dnnl::engine& engine, const ConvShape& s, Type type, int count,
                    int threads, const void* x, const void* dy) {
  const int previous = omp_get_max_threads();
  omp_set_num_threads(threads);
  const int out = (s.size + 2 * (s.kernel / 2) - s.kernel) / s.stride + 1;
  const memory::desc x_desc({count, s.in_channels, s.size, s.size}, type, Tag::nhwc);
  const memory::desc y_desc({count, s.out_channels, out, out}, type, Tag::nhwc);
  const memory::dims w = {s.out_channels, s.in_channels, s.kernel, s.kernel};
  const memory::dims strides = {s.stride, s.stride}, dilation = {0, 0};
  const memory::dims padding = {s.kernel / 2, s.kernel / 2};
  dnnl::convolution_forward::primitive_desc forward(
      dnnl::convolution_forward::desc(
          dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, x_desc,
          memory::desc(w, type, Tag::any), y_desc, strides, dilation, padding, padding),
      engine);
  dnnl::convolution_backward_weights::primitive_desc backward(
      dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, x_desc,
                                               memory::desc(w, Type::f32, Tag::any), y_desc,
                                               strides, dilation, padding, padding),
      engine, forward);
  FilterGradient made{
      dnnl::convolution_backward_weights(backward), memory(x_desc, engine, const_cast<void*>(x)),
      memory(y_desc, engine, const_cast<void*>(dy)), memory(backward.diff_weights_desc(), engine)};
  omp_set_num_threads(previous);
  return made;
}

void Execute(const dnnl::engine& engine, FilterGradient& gradient, int threads) {
  omp_set_num_threads(threads);
  dnnl::stream stream(engine);
  gradient.primitive.execute(stream, {{DNNL_ARG_SRC, gradient.x},
                                      {DNNL_ARG_DIFF_DST, gradient.dy},
                                      {DNNL_ARG_DIFF_WEIGHTS, gradient.dw}});
  stream.wait();
}

struct Timing {
  double wall_ms, cpu_ms;
};

// A thread that lives through the measurements (as a device's kernel thread does, so OpenMP's
// teams opened from it are made once, not per call) and runs one task at a time.
class Worker {
 public:
  Worker() : thread_([this] { Loop(); }) {}
  ~Worker() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  void Start(std::function<void()> task) {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = std::move(task);
    changed_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !task_; });
  }
  void Run(std::function<void()> task) {
    Start(std::move(task));
    Wait();
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      changed_.wait(lock, [&] { return stopping_ || task_; });
      if (stopping_) return;
      lock.unlock();
      task_();
      lock.lock();
      task_ = nullptr;
      changed_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::function<void()> task_;
  bool stopping_ = false;
  std::thread thread_;
};

// Median wall and mean CPU milliseconds of `call` over `repeats` calls after one warm-up.
template <typename F>
Timing Measure(int repeats, const F& call) {
  call();
  std::vector<double> walls;
  const double cpu_start = CpuSeconds();
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    call();
    walls.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(walls.begin(), walls.end());
  return {walls[walls.size() / 2], (CpuSeconds() - cpu_start) * 1e3 / repeats};
}

// Two lanes of half the batch, each made for `made_threads`, run concurrently on two threads
// (each with one OpenMP thread, as the engine's lanes), the second lane's dw added to the first.
Timing TwoLanes(const dnnl::engine& engine, const ConvShape& s, Type type, int made_threads,
                const std::vector<uint8_t>& x, const std::vector<uint8_t>& dy, int repeats,
                Worker& lane_one, Worker& lane_two) {
  const size_t element = type == Type::f32 ? 4 : 2;
  const int half = kBatch / 2;
  const size_t x_lane = static_cast<size_t>(half) * s.in_channels * s.size * s.size * element;
  const size_t y_lane = dy.size() / 2;
  FilterGradient first = Make(engine, s, type, half, made_threads, x.data(), dy.data());
  FilterGradient second =
      Make(engine, s, type, half, made_threads, x.data() + x_lane, dy.data() + y_lane);
  const size_t weights = first.dw.get_desc().get_size() / 4;
  return Measure(repeats, [&] {
    lane_two.Start([&] { Execute(engine, second, 1); });
    lane_one.Run([&] { Execute(engine, first, 1); });
    lane_two.Wait();
    float* sum = static_cast<float*>(first.dw.get_data_handle());
    const float* partial = static_cast<const float*>(second.dw.get_data_handle());
    for (size_t i = 0; i < weights; ++i) sum[i] += partial[i];
  });
}

std::vector<uint8_t> Random(size_t elements, Type type, uint32_t seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal;
  std::vector<uint8_t> bytes(elements * (type == Type::f32 ? 4 : 2));
  for (size_t i = 0; i < elements; ++i) {
    const float value = normal(generator);
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    if (type == Type::f32) {
      std::memcpy(bytes.data() + 4 * i, &value, 4);
    } else {
      const uint16_t high = static_cast<uint16_t>(bits >> 16);  // Truncated: any bf16 will do.
      std::memcpy(bytes.data() + 2 * i, &high, 2);
    }
  }
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 15;
  if (argc == 3 && std::string(argv[1]) == "--repeats") repeats = std::atoi(argv[2]);
  const int cores = omp_get_num_procs();
  std::printf("cpu: %s, %d cores (OpenMP's default threads: %d), batch %d, NHWC\n",
              CpuModel().c_str(), cores, omp_get_max_threads(), kBatch);
  const std::vector<ConvShape> shapes = {
      {"stem 3->16 32x32", 3, 16, 32, 3, 1, 1}, {"16->16 32x32", 16, 16, 32, 3, 1, 6},
      {"16->32 s2 3x3", 16, 32, 32, 3, 2, 1},   {"16->32 s2 1x1", 16, 32, 32, 1, 2, 1},
      {"32->32 16x16", 32, 32, 16, 3, 1, 5},    {"32->64 s2 3x3", 32, 64, 16, 3, 2, 1},
      {"32->64 s2 1x1", 32, 64, 16, 1, 2, 1},   {"64->64 8x8", 64, 64, 8, 3, 1, 5}};
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  const char* ways[] = {"one", "cores", "whole-1", "whole-2"};
  Worker lane_one, lane_two;
  for (Type type : {Type::f32, Type::bf16}) {
    const char* type_name = type == Type::f32 ? "f32" : "bf16";
    Timing network[4] = {};
    int same_bits = 0, shapes_compared = 0;
    for (const ConvShape& s : shapes) {
      const int out = (s.size + 2 * (s.kernel / 2) - s.kernel) / s.stride + 1;
      const std::vector<uint8_t> x =
          Random(static_cast<size_t>(kBatch) * s.in_channels * s.size * s.size, type, 1);
      const std::vector<uint8_t> dy =
          Random(static_cast<size_t>(kBatch) * s.out_channels * out * out, type, 2);
      Timing timings[4];
      timings[0] = TwoLanes(engine, s, type, 1, x, dy, repeats, lane_one, lane_two);
      timings[1] = TwoLanes(engine, s, type, cores, x, dy, repeats, lane_one, lane_two);
      FilterGradient whole_one = Make(engine, s, type, kBatch, 1, x.data(), dy.data());
      FilterGradient whole_two = Make(engine, s, type, kBatch, 2, x.data(), dy.data());
      timings[2] = Measure(repeats, [&] { lane_one.Run([&] { Execute(engine, whole_one, 1); }); });
      timings[3] = Measure(repeats, [&] { lane_one.Run([&] { Execute(engine, whole_two, 2); }); });
      const bool same = whole_one.dw.get_desc() == whole_two.dw.get_desc() &&
                        std::memcmp(whole_one.dw.get_data_handle(), whole_two.dw.get_data_handle(),
                                    whole_one.dw.get_desc().get_size()) == 0;
      same_bits += same ? 1 : 0;
      ++shapes_compared;
      std::printf("%-5s %-18s x%d", type_name, s.name, s.count);
      for (int way = 0; way < 4; ++way) {
        std::printf("  %s %7.3f ms (cpu %7.3f)", ways[way], timings[way].wall_ms,
                    timings[way].cpu_ms);
        network[way].wall_ms += s.count * timings[way].wall_ms;
        network[way].cpu_ms += s.count * timings[way].cpu_ms;
      }
      std::printf("  whole-2 bits %s whole-1\n", same ? "==" : "!=");
    }
    std::printf("%-5s ResNet-20's filter gradients per step:", type_name);
    for (int way = 0; way < 4; ++way) {
      std::printf("  %s %.1f ms (cpu %.1f)", ways[way], network[way].wall_ms, network[way].cpu_ms);
    }
    std::printf("; whole-2 same bits as whole-1 on %d of %d shapes\n", same_bits, shapes_compared);
  }
  return 0;
}
