#include "trace/clock_offset.h"

namespace softwire {
namespace trace {

StatusOr<ClockOffset> EstimateClockOffset(int probes,
                                          const std::function<StatusOr<ClockProbe>()>& probe) {
  if (probes < 1) return InvalidArgumentError("clock offset: need at least one probe");
  ClockOffset best;
  bool have = false;
  Status last_error = UnavailableError("clock offset: no probe answered");
  for (int i = 0; i < probes; ++i) {
    StatusOr<ClockProbe> result = probe();
    if (!result.ok()) {
      last_error = result.status();
      continue;
    }
    const int64_t round_trip = result->received - result->sent;
    if (round_trip < 0) {
      return InvalidArgumentError("clock offset: a probe came back " + std::to_string(-round_trip) +
                                  " ns before it left");
    }
    ++best.probes;
    if (have && round_trip >= best.round_trip_ns) continue;
    have = true;
    best.round_trip_ns = round_trip;
    // Midpoint without overflow: sent + round_trip / 2, rounding the bound up.
    best.offset_ns = result->remote - (result->sent + round_trip / 2);
    best.error_ns = (round_trip + 1) / 2;
  }
  if (!have) return last_error;
  return best;
}

}  // namespace trace
}  // namespace softwire
