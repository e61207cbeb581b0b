// ThreadedTestRunner: a ParallelRunner for kernel tests, running each range on its own
// std::thread (the first on the calling thread).
//
// With Split::kUneven it cuts every loop into `threads` ranges of deliberately unequal sizes
// (the first ones small), ignoring min_chunk, so that kernels meet chunk boundaries in awkward
// places: mid-row, mid-tile, on odd element counts. With Split::kEven it behaves like a real
// runner: equal ranges of at least min_chunk items.
#ifndef SOFTWIRE_RUNTIME_KERNELS_TESTING_THREADED_TEST_RUNNER_H_
#define SOFTWIRE_RUNTIME_KERNELS_TESTING_THREADED_TEST_RUNNER_H_

#include <atomic>
#include <cstdint>
#include <functional>

#include "runtime/kernels/parallel_runner.h"

namespace softwire {
namespace runtime {

class ThreadedTestRunner final : public ParallelRunner {
 public:
  enum class Split { kEven, kUneven };

  ThreadedTestRunner(int threads, Split split) : threads_(threads), split_(split) {}

  void ParallelFor(int64_t count, int64_t min_chunk,
                   const std::function<void(int64_t begin, int64_t end)>& body) override;
  int threads() const override { return threads_; }

  // ParallelFor calls that ran on more than one thread.
  int64_t parallel_calls() const { return parallel_calls_.load(); }

 private:
  const int threads_;
  const Split split_;
  std::atomic<int64_t> parallel_calls_{0};
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_TESTING_THREADED_TEST_RUNNER_H_
