// Clock offsets between nodes, by the minimum round-trip method.
//
// A node asks a peer for its clock N times. Each probe notes the local time it left
// (`sent`), the peer's clock when it answered (`remote`) and the local time the answer came
// back (`received`). The peer read its clock somewhere in [sent, received], so
//   offset = remote - (sent + received) / 2      is off by at most (received - sent) / 2,
// whatever the network did, provided both clocks tick at the same rate over the probes. The
// probe with the shortest round trip gives the tightest bound; that one is returned.
//
// Used once nodes join (the node agent probes the coordinator over Diagnostics.GetClock, and
// each trace records its node's offset and error bound in otherData.clock_offsets). Today, with
// one process, `softwire diagnose ADDR --clock N` runs it against a running job.
//
//   StatusOr<ClockOffset> offset = EstimateClockOffset(8, [&]() -> StatusOr<ClockProbe> {
//     ClockProbe probe;
//     probe.sent = NowNs();
//     SOFTWIRE_ASSIGN_OR_RETURN(probe.remote, AskPeerForItsClock());
//     probe.received = NowNs();
//     return probe;
//   });
//   // remote time ~ local time + offset->offset_ns, within +-offset->error_ns.
#ifndef SOFTWIRE_TRACE_CLOCK_OFFSET_H_
#define SOFTWIRE_TRACE_CLOCK_OFFSET_H_

#include <cstdint>
#include <functional>

#include "base/status.h"

namespace softwire {
namespace trace {

struct ClockProbe {
  int64_t sent = 0;      // Local ns when the request left.
  int64_t remote = 0;    // Peer ns in its answer.
  int64_t received = 0;  // Local ns when the answer arrived.
};

struct ClockOffset {
  int64_t offset_ns = 0;      // Peer clock minus local clock.
  int64_t error_ns = 0;       // |true offset - offset_ns| <= error_ns.
  int64_t round_trip_ns = 0;  // Of the probe used.
  int probes = 0;             // Probes that answered.
};

// Runs `probes` probes (>= 1) and returns the estimate of the fastest. A probe that fails is
// skipped; when all fail, the last error. InvalidArgument for a probe whose answer arrived
// before it left (a broken local clock).
StatusOr<ClockOffset> EstimateClockOffset(int probes,
                                          const std::function<StatusOr<ClockProbe>()>& probe);

}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_CLOCK_OFFSET_H_
