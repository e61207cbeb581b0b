// RegisterLifetimes: which registers of a plan can never be live at the same time, under every
// firing order the actor protocol allows (docs/PROTOCOL.md, "The firing rule"), so that they may
// share bytes of their device's arena (docs/PROTOCOL.md, "Memory").
//
// A fill f of register R is live from the launch of the producer's firing that begins it until
// the completion of the last firing that releases it (each consumer's releasing firing, and the
// producer's completing firing). Two registers never live together when, for every fill f of R
// and g of S, the protocol forces one of them to end before the other begins: every end firing
// of R_f precedes the beginning firing of S_g, or the other way round.
//
// "Precedes" is a path in the firing graph, whose edges are the only orders the protocol
// guarantees, each from one firing's completion to another's launch:
//   - an actor's firing i-k completes before its firing i launches, k its max_in_flight (1:
//     its firings in sequence);
//   - the firing that completes fill f sends Ready, so it precedes every phase-0 consumer's
//     first firing reading f, and a phase-1 consumer's first firing reading f also waits for
//     every phase-0 consumer's release of f;
//   - fill f lies in slot f % slots, so the firing beginning f waits for every release of fill
//     f - slots.
// Nothing else is ordered: messages of different pairs interleave freely, kernels take any
// time.
//
// The graph is built for two steps (whatever the plan's own step count, since engines may run
// a plan for more steps: plan/steps.h). That covers every step: every edge stays within a step
// or goes to a later one; the edges of steps k and k+1 are those of steps 0 and 1 shifted, plus
// slot edges from earlier steps (so the first two steps are the least ordered); and orders are
// monotone (if R_f precedes S_g it precedes S_{g+1}, and R_{f-1} precedes S_g too), so a pair
// ordered across one step boundary stays ordered farther apart.
//
// Only registers whose slots hold nothing between fills may share (MayShareBytes): a
// variable's register keeps its value from step to step, a phase-1 consumer writes in place,
// and send and recv actors move bytes outside their firings.
//
// Pure; thread-safe once built. Cost: O(firings x beginning firings / 64) words of memory and
// time for two steps; a plan larger than kMaxReachabilityBits is not analyzed (nothing shares),
// which it finds out in one pass over the registers, before building the firing graph.
#ifndef SOFTWIRE_PLAN_REGISTER_LIFETIMES_H_
#define SOFTWIRE_PLAN_REGISTER_LIFETIMES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/plan.pb.h"

namespace softwire {
namespace plan {

// True when register `register_id`'s slots hold nothing between fills and are touched only by
// firings of its producer and consumers: its producer is a source, compute, accumulate, copy
// or boxing actor, no consumer is a phase-1 (in-place) writer, and no consumer is a send actor.
bool MayShareBytes(const proto::Plan& plan, int64_t register_id);

// True when actor `writer`'s kernel may write its output register `output` over input register
// `input` while it reads it (in place, docs/PROTOCOL.md "In-place ops"): `writer` is a compute
// actor whose op computes each output element from the same element of `input` alone (relu,
// gelu, their gradients, scale, bias_add's x, add's operand of the output's shape, with one
// output; or a fused kernel, any of its outputs but, after a product, its value and any over
// the product's operands: proto/fused_program.h FusedMayWriteOver), and it reads `input` as
// a tensor of the output's shape and type.
bool KernelMayWriteOver(const proto::Plan& plan, const proto::ActorDef& writer, int64_t input,
                        int64_t output);
// The same for `writer`'s only output (false when it has several).
bool KernelMayWriteOver(const proto::Plan& plan, const proto::ActorDef& writer, int64_t input);

// Bytes the slots of device `device`'s registers would take side by side, sharing nothing:
// what reuse saved is this minus the device's register_bytes.
int64_t RegisterBytesWithoutSharing(const proto::Plan& plan, int device);

class RegisterLifetimes {
 public:
  // Above this many reachability bits (firings x beginning firings, two steps), Analyze gives
  // up and NeverLiveTogether is false for every pair: 256 Mbit, 32 MiB.
  static constexpr int64_t kMaxReachabilityBits = int64_t{1} << 28;

  // Builds the firing graph of two steps and its reachability. The plan must pass
  // CheckIds, CheckProducersAndConsumers, CheckPeriods and CheckPhases. Not analyzed (see
  // analyzed()) when a period does not divide pieces_per_step, the graph has a cycle (the plan
  // deadlocks), or it is too large.
  explicit RegisterLifetimes(const proto::Plan& plan);

  // False when the plan could not be analyzed; why() says why.
  bool analyzed() const { return analyzed_; }
  const std::string& why() const { return why_; }

  // True when no fill of `a` can be live while a fill of `b` is, under any firing order, and
  // both MayShareBytes. False for a == b.
  bool NeverLiveTogether(int64_t a, int64_t b) const;

  // True when register `output`'s producer may write each fill f of `output` into the slot of
  // fill f of `input`, which it reads in that very firing: `input`'s every other use of fill f
  // ends before that firing launches (the writer is its last reader), and every other pair of
  // fills of the two registers that would lie in one slot is ordered. Both MayShareBytes, the
  // same slot count, the writer reads `input` and fires once per fill of both. The caller lays
  // the two out identically (same offset and bytes per slot) and checks KernelMayWriteOver.
  bool WritesInPlace(int64_t input, int64_t output) const;

  // Position of the firing that begins `register_id`'s first fill in a topological order of
  // the firing graph (0 when not analyzed): a lifetime-first packing order.
  int64_t FirstWriteRank(int64_t register_id) const;

 private:
  using Firing = int64_t;  // A node: first_firing_[actor] + firing index.

  struct Lives {
    std::vector<Firing> begins;             // Per fill in the window.
    std::vector<std::vector<Firing>> ends;  // Per fill: every firing whose completion ends it.
  };

  void BuildNodes();
  // Distinct firings that begin a fill of a register that MayShareBytes: the reachability
  // table's columns, counted before anything else is built so that a plan too large to analyze
  // costs one pass over its registers.
  int64_t CountBeginningFirings() const;
  static std::string TooLarge(int64_t nodes, int64_t columns);
  void BuildEdges();
  bool SortTopologically();
  void BuildReachability();
  void BuildLives();
  bool Precedes(const std::vector<Firing>& ends, Firing begin) const;

  const proto::Plan& plan_;
  bool analyzed_ = false;
  std::string why_;
  int64_t pieces_ = 0;                           // In the two-step window.
  int64_t nodes_ = 0;                            // Firings in the window.
  std::vector<Firing> first_firing_;             // Per actor.
  std::vector<std::vector<Firing>> successors_;  // Per firing.
  std::vector<Firing> topological_order_;
  std::vector<int64_t> rank_;       // Per firing: position in topological_order_.
  std::vector<int64_t> column_of_;  // Per firing: reachability column, or -1.
  int64_t columns_ = 0;
  std::vector<uint64_t> reachable_;  // Per firing, columns_ bits: strictly after it.
  std::vector<Lives> lives_;         // Per register.
  std::vector<bool> may_share_;      // Per register.
};

}  // namespace plan
}  // namespace softwire

#endif  // SOFTWIRE_PLAN_REGISTER_LIFETIMES_H_
