// SimTime: the simulator's virtual clock, integer nanoseconds.
//
// Integers rather than double seconds, because the simulator must be exact and deterministic:
// a sum of durations is the same whatever order it is taken in, equal stage times give exactly
// equal event times (so ties are real ties, broken by the event queue's insertion order rather
// than by rounding noise), and nanoseconds are the unit of trace/ (trace::TimeNs). int64
// nanoseconds span 292 years of virtual time. Kernel estimates are rounded to the nearest
// nanosecond once, when the plan is loaded; a kernel estimated under 0.5 ns takes 0 ns.
#ifndef SOFTWIRE_SIMULATOR_SIM_TIME_H_
#define SOFTWIRE_SIMULATOR_SIM_TIME_H_

#include <cmath>
#include <cstdint>

namespace softwire {
namespace simulator {

using SimTime = int64_t;  // Nanoseconds of virtual time since the simulation started.

constexpr SimTime kNanosecondsPerSecond = 1000000000;

// Rounds to the nearest nanosecond; negative, NaN and infinite durations become 0, which the
// simulator's callers reject or report before they get here.
// Durations beyond a century are clamped to one (no plan estimates that; it keeps sums of a
// few thousand of them from overflowing).
inline SimTime SecondsToSimTime(double seconds) {
  constexpr double kCentury = 100 * 365.25 * 24 * 3600;
  if (!(seconds > 0)) return 0;
  if (seconds > kCentury) seconds = kCentury;
  return static_cast<SimTime>(std::llround(seconds * 1e9));
}

inline double SimTimeToSeconds(SimTime time) {
  return static_cast<double>(time) * 1e-9;
}

}  // namespace simulator
}  // namespace softwire

#endif  // SOFTWIRE_SIMULATOR_SIM_TIME_H_
