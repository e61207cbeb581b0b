// PlanBoxing: how to turn a tensor laid out as (mesh A, nd-sbp a) into (mesh B, nd-sbp b), and
// what that costs (docs/PARALLELISM.md, "Boxing"). The compiler asks it twice: while choosing
// sbp (only the seconds matter) and while inserting boxing (the steps or parts are built into
// actors by compiler/physical/boxing_builder).
//
// On one mesh, where a and b differ on one mesh axis, one collective runs in every group of
// devices that differ only on that axis:
//   B -> S(a)    local slice                 S(a) -> B    ring all-gather, then assemble
//   P -> B       ring all-reduce, chunked    P -> S(a)    ring reduce-scatter
//   S(a) -> S(b) all-to-all                  B -> P       member 0 keeps, the others fill 0
//   S(a) -> P    each member pads its part with zeros (a local assemble)
// Where they differ on both axes, two such steps in the cheaper order. Everything else (other
// meshes, steps that would cut a tensor axis both mesh axes split) takes the general path:
// every destination part is assembled from the overlapping blocks of source parts, summing
// partial terms, with B source axes read from the nearest replica.
//
// Pure functions of their arguments; thread-safe.
#ifndef SOFTWIRE_PLACEMENT_BOXING_PLAN_H_
#define SOFTWIRE_PLACEMENT_BOXING_PLAN_H_

#include <string>
#include <vector>

#include "placement/cost_model.h"
#include "placement/sbp.h"

namespace softwire {
namespace placement {

enum class BoxingMethod {
  kLocalSlice,     // B -> S
  kAllGather,      // S -> B
  kAllReduce,      // P -> B
  kReduceScatter,  // P -> S
  kAllToAll,       // S(a) -> S(b)
  kZeroFill,       // B -> P
  kPadToPartial,   // S -> P
};
// "slice", "all_gather", "all_reduce", "reduce_scatter", "all_to_all", "zero_fill", "pad".
const char* BoxingMethodName(BoxingMethod method);

// One collective along `mesh_axis`: `from` and `to` differ only there.
struct BoxingStep {
  BoxingMethod method = BoxingMethod::kLocalSlice;
  int mesh_axis = 0;
  NdSbp from;
  NdSbp to;
};

// A block of the source part at linear mesh index `source`, in logical tensor coordinates.
struct SourceBlock {
  int source = 0;
  TensorBox box;
};

// What one destination mesh position holds: zeros (a P term it does not carry), or `region`
// assembled from `blocks` (summed where they overlap, which is how partial terms add up).
struct DestinationPart {
  bool zero = false;
  TensorBox region;
  std::vector<SourceBlock> blocks;
};

struct BoxingRequest {
  const DeviceMesh* from_mesh = nullptr;
  NdSbp from;
  const DeviceMesh* to_mesh = nullptr;
  NdSbp to;
  const std::vector<int64_t>* dims = nullptr;  // Logical shape.
  int64_t element_bytes = 4;
};

struct BoxingPlan {
  bool needed = false;   // False when the layouts already agree.
  bool general = false;  // True: `parts`; false: `steps`.
  std::vector<BoxingStep> steps;
  std::vector<DestinationPart> parts;  // Indexed by destination linear mesh index.
  double seconds = 0;

  // "none", "all_reduce over dp", "all_gather over tp, then slice over dp", "general".
  std::string Describe() const;
};

// The plan and its seconds. Every valid request has a plan: the general path handles any pair
// of layouts whose splits are even.
BoxingPlan PlanBoxing(const CostModel& cost, const BoxingRequest& request);

// A plan for a per-step gradient on its way to its update, shaped for fusing into a gradient
// bucket: local steps (pad S -> P), then all-reduces over every mesh axis the value must be
// whole on, then local steps (slice B -> S). Both layouts must be on the same mesh, neither
// with P in `to`. `needed` is false when nothing changes; nullopt-like (empty steps and
// general) when this shape does not apply (a step would cut interleaved parts), and the caller
// falls back to PlanBoxing.
BoxingPlan PlanGradientSync(const CostModel& cost, const BoxingRequest& request);

// The method of a one-axis change from `from` to `to` (which must differ), e.g. P -> B is
// kAllReduce.
BoxingMethod MethodFor(const Sbp& from, const Sbp& to);

}  // namespace placement
}  // namespace softwire

#endif  // SOFTWIRE_PLACEMENT_BOXING_PLAN_H_
