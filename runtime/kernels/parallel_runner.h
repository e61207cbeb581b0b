// ParallelRunner: how a kernel spreads a loop over its device's cores.
#ifndef SOFTWIRE_RUNTIME_KERNELS_PARALLEL_RUNNER_H_
#define SOFTWIRE_RUNTIME_KERNELS_PARALLEL_RUNNER_H_

#include <cstdint>
#include <functional>

namespace softwire {
namespace runtime {

class ParallelRunner {
 public:
  virtual ~ParallelRunner() = default;

  // Calls body(begin, end) on disjoint ranges covering [0, count), possibly concurrently, and
  // returns when all calls returned. Ranges hold at least `min_chunk` items (except the last),
  // so small loops stay on the calling thread. `body` must not throw.
  virtual void ParallelFor(int64_t count, int64_t min_chunk,
                           const std::function<void(int64_t begin, int64_t end)>& body) = 0;

  // Threads that may run bodies at once (1 = serial).
  virtual int threads() const = 0;
};

// Runs every body on the calling thread.
class SerialRunner final : public ParallelRunner {
 public:
  void ParallelFor(int64_t count, int64_t min_chunk,
                   const std::function<void(int64_t, int64_t)>& body) override {
    if (count > 0) body(0, count);
  }
  int threads() const override { return 1; }
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_PARALLEL_RUNNER_H_
