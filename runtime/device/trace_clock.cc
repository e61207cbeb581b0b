#include "runtime/device/trace_clock.h"

#include <fstream>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace softwire {
namespace runtime {

bool TraceClock::DetectTsc() {
#if defined(__x86_64__)
  // Invariant TSC: CPUID 0x80000007, EDX bit 8 (constant rate, runs in every C-state).
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx) == 0 || (edx & (1u << 8)) == 0) {
    return false;
  }
  // And the kernel found it synchronized across CPUs: it keeps CLOCK_MONOTONIC on it.
  std::ifstream source("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  return static_cast<bool>(source >> name) && name == "tsc";
#else
  return false;
#endif
}

std::string TraceClock::Description() {
  return UsesTsc() ? "CLOCK_MONOTONIC (read through the TSC)" : "CLOCK_MONOTONIC";
}

void TickCalibration::Begin() {
  ticks0_ = TraceClock::Now();
  ns0_ = TraceClock::MonotonicNs();
  ns_per_tick_ = 1;
}

void TickCalibration::End() {
  if (!TraceClock::UsesTsc()) return;
  const int64_t ticks = TraceClock::Now();
  const int64_t ns = TraceClock::MonotonicNs();
  if (ticks > ticks0_ && ns > ns0_) {
    ns_per_tick_ = static_cast<double>(ns - ns0_) / static_cast<double>(ticks - ticks0_);
  }
}

int64_t TickCalibration::ToNs(int64_t ticks) const {
  return ns0_ + static_cast<int64_t>(static_cast<double>(ticks - ticks0_) * ns_per_tick_);
}

}  // namespace runtime
}  // namespace softwire
