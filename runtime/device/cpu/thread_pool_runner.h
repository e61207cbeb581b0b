// ThreadPoolRunner: the ParallelRunner of a cpu device, a small pool of helper threads.
//
// A cpu device with `cores` cores gets one runner of `cores` threads: the thread that calls
// ParallelFor (the worker running the device's strand, see device_queue.h) takes a share of
// the ranges itself, and `cores - 1` helpers take the rest. Helpers spin for a short while
// after each loop, so the next kernel's loop reaches them in ~0.1 us instead of the ~80 us a
// sleeping hand-off costs on a small VM (docs/MACHINE.md), then park on a condition
// variable so an idle job burns no CPU.
//
//   ThreadPoolRunner runner(/*threads=*/4);
//   runner.ParallelFor(rows, /*min_chunk=*/64, [&](int64_t begin, int64_t end) { ... });
//
// Helpers are named `<name_prefix><index>` from 1 (the caller is index 0), e.g. "sw:cpu0/k1"
// (base/thread_name.h), and each may be pinned to one core.
//
// Threading: ParallelFor may be called from any thread. One call uses the pool at a time; a
// call that finds the pool busy (a second queue of the device, or a nested call from inside a
// body) runs its loop serially on its own thread, so cores are never oversubscribed and
// nothing can deadlock.
// Ownership: the runner owns its helpers; the destructor stops and joins them.
#ifndef SOFTWIRE_RUNTIME_DEVICE_CPU_THREAD_POOL_RUNNER_H_
#define SOFTWIRE_RUNTIME_DEVICE_CPU_THREAD_POOL_RUNNER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/kernels/parallel_runner.h"

namespace softwire {
namespace runtime {

struct ThreadPoolOptions {
  // >= 1; counts the calling thread.
  int threads = 1;
  // How long an idle helper polls for the next loop before it parks.
  std::chrono::microseconds spin = std::chrono::microseconds(50);
  // Helper i is named thread_name_prefix + i.
  std::string thread_name_prefix = "sw:pool/k";
  // When not empty, helper i runs only on core cores[i % cores.size()] (the caller, index 0,
  // is pinned by whoever owns it).
  std::vector<int> cores;
};

class ThreadPoolRunner final : public ParallelRunner {
 public:
  explicit ThreadPoolRunner(ThreadPoolOptions options);
  // `threads` >= 1 counts the calling thread; `spin` is how long an idle helper polls for the
  // next loop before it parks.
  explicit ThreadPoolRunner(int threads,
                            std::chrono::microseconds spin = std::chrono::microseconds(50));
  ~ThreadPoolRunner() override;
  ThreadPoolRunner(const ThreadPoolRunner&) = delete;
  ThreadPoolRunner& operator=(const ThreadPoolRunner&) = delete;

  void ParallelFor(int64_t count, int64_t min_chunk,
                   const std::function<void(int64_t begin, int64_t end)>& body) override;
  int threads() const override { return threads_; }

 private:
  void HelperLoop(int index, const ThreadPoolOptions& options);
  // Waits until the claim word carries a generation other than `seen`; false when stopping.
  bool WaitForLoop(uint32_t seen);
  // Claims and runs parts of the loop of `generation` until none is left.
  void RunParts(uint32_t generation);

  const int threads_;
  const std::chrono::microseconds spin_;

  std::mutex call_mutex_;  // Held by the one ParallelFor using the pool.

  // The loop being run. Written by the caller before it publishes a new generation in
  // claim_, read by whoever wins a part of that generation (the caller waits for every part,
  // so these stay unchanged while anyone may read them).
  const std::function<void(int64_t, int64_t)>* body_ = nullptr;
  int64_t count_ = 0;
  // generation (32 bits) | parts (16 bits) | next part to claim (16 bits).
  std::atomic<uint64_t> claim_{0};
  std::atomic<int> parts_done_{0};

  std::atomic<bool> stopping_{false};
  std::atomic<int> parked_{0};
  std::mutex park_mutex_;
  std::condition_variable park_condition_;
  std::vector<std::thread> helpers_;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_CPU_THREAD_POOL_RUNNER_H_
