// The fill arithmetic of docs/PROTOCOL.md ("The firing rule"), written once for every engine,
// checker and analysis: which fill of a register a firing reads or writes, which firing begins,
// completes or releases a fill, which slot a fill lies in and when that slot is free for it.
//
// An actor of period P fires once per P pieces; a register of period Q (a multiple of P) is
// filled once per Q pieces, so Q / P firings share one fill. Fill f always lies in slot
// f % slots, and fills free their slots in order, so fill f may begin once fill f - slots (the
// previous occupant of its slot) was freed.
//
// Two spellings of each rule: by periods (P, Q), for code that reads them from a plan, and by
// `firings_per_fill` (Q / P), for hot loops that keep the ratio and skip the division when it
// is 1. fill_arithmetic_test.cc checks that they agree. Pure inline functions; thread-safe.
#ifndef SOFTWIRE_PLAN_FILL_ARITHMETIC_H_
#define SOFTWIRE_PLAN_FILL_ARITHMETIC_H_

#include <cstdint>

namespace softwire {
namespace plan {

// --- By firings per fill (Q / P). ---

// Firings of an actor of period `actor_period` that share one fill of a register of period
// `register_period`; at least 1.
inline int64_t FiringsPerFill(int64_t actor_period, int64_t register_period) {
  const int64_t ratio = actor_period > 0 ? register_period / actor_period : 1;
  return ratio > 1 ? ratio : 1;
}
// The fill that firing `firing` reads or writes.
inline int64_t FillOfFiring(int64_t firing, int64_t firings_per_fill) {
  return firings_per_fill == 1 ? firing : firing / firings_per_fill;
}
// True when firing `firing` begins its fill (so it needs a free slot of an output).
inline bool FiringBeginsFill(int64_t firing, int64_t firings_per_fill) {
  return firings_per_fill == 1 || firing % firings_per_fill == 0;
}
// True when firing `firing` is the last one on its fill: a producer completes the fill (and
// sends its Readies), a consumer releases it.
inline bool FiringEndsFill(int64_t firing, int64_t firings_per_fill) {
  return firings_per_fill == 1 || (firing + 1) % firings_per_fill == 0;
}

// --- By periods: actor period P, register period Q, Q a multiple of P. ---

// The fill of a register that firing `firing` reads or writes: (firing * P) / Q.
inline int64_t FillOf(int64_t firing, int64_t actor_period, int64_t register_period) {
  return firing * actor_period / register_period;
}
// True when firing `firing` begins a fill of an output (needs a free slot).
inline bool BeginsFill(int64_t firing, int64_t actor_period, int64_t register_period) {
  return (firing * actor_period) % register_period == 0;
}
// True when firing `firing` is the last on its fill: a producer completes it, a consumer
// releases it.
inline bool EndsFill(int64_t firing, int64_t actor_period, int64_t register_period) {
  return ((firing + 1) * actor_period) % register_period == 0;
}
// The firing of the producer that completes fill `fill` (and sends its Readies).
inline int64_t CompletingFiring(int64_t fill, int64_t actor_period, int64_t register_period) {
  return (fill + 1) * register_period / actor_period - 1;
}
// The first firing of a consumer that reads fill `fill`.
inline int64_t FirstReadingFiring(int64_t fill, int64_t actor_period, int64_t register_period) {
  return fill * register_period / actor_period;
}
// The firing of a consumer after which it releases fill `fill` (its last firing reading it).
inline int64_t ReleasingFiring(int64_t fill, int64_t actor_period, int64_t register_period) {
  return CompletingFiring(fill, actor_period, register_period);
}
// True when a consumer whose next firing is `next_firing` still needs fill `fill` (it has not
// yet run the firing that releases it).
inline bool StillNeedsFill(int64_t next_firing, int64_t fill, int64_t actor_period,
                           int64_t register_period) {
  return next_firing <= ReleasingFiring(fill, actor_period, register_period);
}
// Fills of a register of period Q in `total_pieces` pieces.
inline int64_t FillCount(int64_t total_pieces, int64_t register_period) {
  return total_pieces / register_period;
}

// --- Slots. ---

// The slot fill `fill` lies in.
inline int64_t SlotOf(int64_t fill, int64_t slots) {
  return fill % slots;
}
// The fill that used `fill`'s slot before it (negative: none did).
inline int64_t PreviousFillInSlot(int64_t fill, int64_t slots) {
  return fill - slots;
}
// True when fill `fill` may begin, fills before `freed` having freed their slots.
inline bool SlotFreeFor(int64_t fill, int64_t freed, int64_t slots) {
  return PreviousFillInSlot(fill, slots) < freed;
}

}  // namespace plan
}  // namespace softwire

#endif  // SOFTWIRE_PLAN_FILL_ARITHMETIC_H_
