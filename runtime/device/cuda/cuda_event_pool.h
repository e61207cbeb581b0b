// CudaEventPool: the launch markers of one cuda device queue: a pair of CUDA events per launch
// in flight (recorded before and after its kernel), reused once the completion thread reported
// the launch. The pool grows to the most launches ever in flight on the queue (the sum of its
// actors' max_in_flight) and never shrinks; events are created only while it grows.
//
// Times: a CUDA event gives elapsed time between two events, not a host clock reading. The
// completion thread reads TraceClock when the end event is reached (late by its wake-up, a few
// microseconds while it spins in cudaEventSynchronize) and puts the start the events' elapsed
// time before it, converted with the ticks per nanosecond measured when the pool was made.
//
// Threading: Acquire is called under the queue's lock; Wait and Recycle by the completion
// thread; the free list has its own lock.
#ifndef SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_EVENT_POOL_H_
#define SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_EVENT_POOL_H_

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/device/cuda/completion_thread.h"

namespace softwire {
namespace runtime {

struct CudaEventPair {
  cudaEvent_t start = nullptr;
  cudaEvent_t end = nullptr;
};

class CudaEventPool final : public LaunchMarkers {
 public:
  // `device_name` names the device in errors; `ordinal` is the CUDA device the events live on.
  CudaEventPool(std::string device_name, int ordinal);
  ~CudaEventPool() override;

  // A free pair, created when none is; errors name the device.
  StatusOr<CudaEventPair*> Acquire();

  Status Wait(void* marker, int64_t* start_ticks, int64_t* end_ticks) override;
  void Recycle(void* marker) override;

 private:
  const std::string device_name_;
  const int ordinal_;
  const double ticks_per_ns_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<CudaEventPair>> all_;  // Under mutex_.
  std::vector<CudaEventPair*> free_;                 // Under mutex_.
};

// TraceClock ticks per nanosecond, measured over about a millisecond (1 where the clock counts
// nanoseconds).
double MeasureTicksPerNanosecond();

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_EVENT_POOL_H_
