#include "runtime/device/cuda/cuda_event_pool.h"

#include <chrono>
#include <thread>

#include "runtime/device/cuda/cuda_status.h"
#include "runtime/device/trace_clock.h"

namespace softwire {
namespace runtime {

double MeasureTicksPerNanosecond() {
  if (!TraceClock::UsesTsc()) return 1.0;
  const int64_t ns0 = TraceClock::MonotonicNs();
  const int64_t ticks0 = TraceClock::Now();
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const int64_t ns1 = TraceClock::MonotonicNs();
  const int64_t ticks1 = TraceClock::Now();
  return ns1 > ns0 ? static_cast<double>(ticks1 - ticks0) / static_cast<double>(ns1 - ns0) : 1.0;
}

CudaEventPool::CudaEventPool(std::string device_name, int ordinal)
    : device_name_(std::move(device_name)),
      ordinal_(ordinal),
      ticks_per_ns_(MeasureTicksPerNanosecond()) {}

CudaEventPool::~CudaEventPool() {
  cudaSetDevice(ordinal_);
  for (const std::unique_ptr<CudaEventPair>& pair : all_) {
    cudaEventDestroy(pair->start);
    cudaEventDestroy(pair->end);
  }
}

StatusOr<CudaEventPair*> CudaEventPool::Acquire() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!free_.empty()) {
    CudaEventPair* pair = free_.back();
    free_.pop_back();
    return pair;
  }
  auto pair = std::make_unique<CudaEventPair>();
  SOFTWIRE_RETURN_IF_ERROR(
      CudaCall(device_name_, "cudaEventCreate", cudaEventCreate(&pair->start)));
  Status end = CudaCall(device_name_, "cudaEventCreate", cudaEventCreate(&pair->end));
  if (!end.ok()) {
    cudaEventDestroy(pair->start);
    return end;
  }
  all_.push_back(std::move(pair));
  return all_.back().get();
}

Status CudaEventPool::Wait(void* marker, int64_t* start_ticks, int64_t* end_ticks) {
  CudaEventPair* pair = static_cast<CudaEventPair*>(marker);
  // The completion thread's current device: the events' (set each time: cheap, and the thread
  // has no other hook to set it once).
  SOFTWIRE_RETURN_IF_ERROR(CudaCall(device_name_, "cudaSetDevice", cudaSetDevice(ordinal_)));
  // cudaEventSynchronize on an event created with default flags spins (yielding) until the
  // event is reached: the completion thread's wake-up is microseconds, not a sleep's tens.
  SOFTWIRE_RETURN_IF_ERROR(
      CudaCall(device_name_, "cudaEventSynchronize", cudaEventSynchronize(pair->end)));
  *end_ticks = TraceClock::Now();
  float milliseconds = 0;
  SOFTWIRE_RETURN_IF_ERROR(CudaCall(device_name_, "cudaEventElapsedTime",
                                    cudaEventElapsedTime(&milliseconds, pair->start, pair->end)));
  *start_ticks =
      *end_ticks - static_cast<int64_t>(static_cast<double>(milliseconds) * 1e6 * ticks_per_ns_);
  return Status::Ok();
}

void CudaEventPool::Recycle(void* marker) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(static_cast<CudaEventPair*>(marker));
}

}  // namespace runtime
}  // namespace softwire
