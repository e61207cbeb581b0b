// TraceClock: the clock every trace timestamp of the CAF runtime is read from.
//
// Tracing reads it twice per firing, on the thread that runs the kernel, so its cost is most
// of what tracing costs. Measured on the 2-core CI machine: clock_gettime(CLOCK_MONOTONIC)
// through the vDSO ~23 ns (std::chrono::steady_clock the same), rdtsc ~10 ns. With a noop
// kernel (bench/actor_overhead, ~0.49 us per firing) the difference is about 4% of a firing.
// So the clock counts CPU time-stamp-counter ticks where the kernel itself trusts the TSC
// (its CLOCK_MONOTONIC clocksource is "tsc", and the CPU says the TSC is invariant), and
// CLOCK_MONOTONIC nanoseconds anywhere else. Ticks become CLOCK_MONOTONIC nanoseconds
// afterwards through a TickCalibration: two (ticks, ns) readings, at the start and at the end
// of the run.
//
// Threading: thread-safe. The clock source is chosen once per process (a hardware property).
#ifndef SOFTWIRE_RUNTIME_DEVICE_TRACE_CLOCK_H_
#define SOFTWIRE_RUNTIME_DEVICE_TRACE_CLOCK_H_

#include <time.h>

#include <cstdint>
#include <string>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace softwire {
namespace runtime {

class TraceClock {
 public:
  // Ticks now.
  static int64_t Now() {
#if defined(__x86_64__)
    if (UsesTsc()) return static_cast<int64_t>(__rdtsc());
#endif
    return MonotonicNs();
  }

  static int64_t MonotonicNs() {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
  }

  // True when ticks are TSC ticks; false when they are CLOCK_MONOTONIC nanoseconds.
  static bool UsesTsc() {
    static const bool uses_tsc = DetectTsc();
    return uses_tsc;
  }

  // "CLOCK_MONOTONIC (read through the TSC)" or "CLOCK_MONOTONIC".
  static std::string Description();

 private:
  static bool DetectTsc();
};

// Maps ticks to CLOCK_MONOTONIC nanoseconds, linearly between two readings.
class TickCalibration {
 public:
  // The first reading (the run starts).
  void Begin();
  // The second reading (the run ended). Without one, ticks of a TSC are taken at 1 GHz.
  void End();
  int64_t ToNs(int64_t ticks) const;
  // CLOCK_MONOTONIC nanoseconds at Begin.
  int64_t origin_ns() const { return ns0_; }

 private:
  int64_t ticks0_ = 0;
  int64_t ns0_ = 0;
  double ns_per_tick_ = 1;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_TRACE_CLOCK_H_
