#include "runtime/device/cpu/thread_pool_runner.h"

#include <glog/logging.h>

#include <algorithm>

#include "base/thread_affinity.h"
#include "base/thread_name.h"

namespace softwire {
namespace runtime {
namespace {

constexpr uint64_t kPartBits = 16;
constexpr uint64_t kPartMask = (uint64_t{1} << kPartBits) - 1;

uint32_t GenerationOf(uint64_t claim) {
  return static_cast<uint32_t>(claim >> 32);
}
int PartsOf(uint64_t claim) {
  return static_cast<int>((claim >> kPartBits) & kPartMask);
}
int NextPartOf(uint64_t claim) {
  return static_cast<int>(claim & kPartMask);
}
uint64_t MakeClaim(uint32_t generation, int parts) {
  return (uint64_t{generation} << 32) | (static_cast<uint64_t>(parts) << kPartBits);
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Range of part `part` when [0, count) is cut into `parts` near-equal ranges.
void PartRange(int64_t count, int parts, int part, int64_t* begin, int64_t* end) {
  int64_t base = count / parts;
  int64_t extra = count % parts;  // The first `extra` parts get one more item.
  *begin = part * base + std::min<int64_t>(part, extra);
  *end = *begin + base + (part < extra ? 1 : 0);
}

}  // namespace

namespace {

ThreadPoolOptions PoolOf(int threads, std::chrono::microseconds spin) {
  ThreadPoolOptions options;
  options.threads = threads;
  options.spin = spin;
  return options;
}

}  // namespace

ThreadPoolRunner::ThreadPoolRunner(int threads, std::chrono::microseconds spin)
    : ThreadPoolRunner(PoolOf(threads, spin)) {}

ThreadPoolRunner::ThreadPoolRunner(ThreadPoolOptions options)
    : threads_(std::max(1, std::min(options.threads, static_cast<int>(kPartMask)))),
      spin_(options.spin) {
  helpers_.reserve(threads_ - 1);
  for (int i = 1; i < threads_; ++i) {
    helpers_.emplace_back([this, i, options] { HelperLoop(i, options); });
  }
}

ThreadPoolRunner::~ThreadPoolRunner() {
  stopping_.store(true);
  {
    std::lock_guard<std::mutex> lock(park_mutex_);
    park_condition_.notify_all();
  }
  for (std::thread& helper : helpers_) helper.join();
}

void ThreadPoolRunner::ParallelFor(int64_t count, int64_t min_chunk,
                                   const std::function<void(int64_t, int64_t)>& body) {
  if (count <= 0) return;
  int64_t chunk = std::max<int64_t>(1, min_chunk);
  int parts = static_cast<int>(std::min<int64_t>(threads_, count / chunk));
  if (parts <= 1) {
    body(0, count);
    return;
  }
  std::unique_lock<std::mutex> call(call_mutex_, std::try_to_lock);
  if (!call.owns_lock()) {  // Pool busy: another queue of this device, or a nested call.
    body(0, count);
    return;
  }
  body_ = &body;
  count_ = count;
  parts_done_.store(0, std::memory_order_relaxed);
  uint32_t generation = GenerationOf(claim_.load(std::memory_order_relaxed)) + 1;
  // seq_cst store, paired with the seq_cst increment of parked_ in WaitForLoop: either the
  // helper sees the new generation or we see it parked and wake it.
  claim_.store(MakeClaim(generation, parts));
  if (parked_.load() > 0) {
    std::lock_guard<std::mutex> lock(park_mutex_);
    park_condition_.notify_all();
  }
  RunParts(generation);
  // Helpers hold the remaining parts; they are about as long as ours, so spin.
  while (parts_done_.load(std::memory_order_acquire) < parts) CpuRelax();
  body_ = nullptr;
}

void ThreadPoolRunner::RunParts(uint32_t generation) {
  uint64_t claim = claim_.load(std::memory_order_acquire);
  while (GenerationOf(claim) == generation && NextPartOf(claim) < PartsOf(claim)) {
    if (!claim_.compare_exchange_weak(claim, claim + 1, std::memory_order_acq_rel)) continue;
    int64_t begin = 0;
    int64_t end = 0;
    PartRange(count_, PartsOf(claim), NextPartOf(claim), &begin, &end);
    (*body_)(begin, end);
    parts_done_.fetch_add(1, std::memory_order_release);
    claim = claim_.load(std::memory_order_acquire);
  }
}

bool ThreadPoolRunner::WaitForLoop(uint32_t seen) {
  auto spin_until = std::chrono::steady_clock::now() + spin_;
  int polls = 0;
  while (true) {
    if (stopping_.load(std::memory_order_relaxed)) return false;
    if (GenerationOf(claim_.load(std::memory_order_acquire)) != seen) return true;
    CpuRelax();
    // Reading the clock costs ~20 ns; look at it every 64 polls.
    if ((++polls & 63) == 0 && std::chrono::steady_clock::now() >= spin_until) break;
  }
  std::unique_lock<std::mutex> lock(park_mutex_);
  parked_.fetch_add(1);
  park_condition_.wait(lock,
                       [&] { return stopping_.load() || GenerationOf(claim_.load()) != seen; });
  parked_.fetch_sub(1);
  return !stopping_.load();
}

void ThreadPoolRunner::HelperLoop(int index, const ThreadPoolOptions& options) {
  NameCurrentThread(options.thread_name_prefix + std::to_string(index));
  if (!options.cores.empty()) {
    PinCurrentThread(options.cores[static_cast<size_t>(index) % options.cores.size()]);
  }
  uint32_t seen = GenerationOf(claim_.load());
  while (WaitForLoop(seen)) {
    seen = GenerationOf(claim_.load(std::memory_order_acquire));
    RunParts(seen);
  }
}

}  // namespace runtime
}  // namespace softwire
