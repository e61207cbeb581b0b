// BoxingActorsPerDevice: how many actors BoxingBuilder (boxing_builder.h) makes for one boxing
// plan on the device that gets the most, without building them. The sbp search prices every
// boxing actor's firing (placement::CostModel::ActorFiringSeconds) with it, so that it does
// not choose layouts that add actors for nothing (docs/DECISIONS.md, "The sbp search prices
// the actors a boxing adds").
//
// It mirrors BoxingBuilder::Build one to one (boxing_builder_test checks the two agree on
// every pair of layouts it builds):
//   slice 1; all-gather n (n-1 copies, an assemble); reduce-scatter and all-to-all n+1
//   (n slices or slice-copies, an assemble); zero fill 1 (0 on member 0); pad 1;
//   all-reduce: a split and a concat per member, and per chunk a copy and an add on every
//   member but the chunk's first, and a copy on every member but its owner;
//   general: per destination part its copies and slices (not a whole part already on the
//   device) and an assemble unless one whole block is the part; a zero part is one fill.
// Steps of several mesh axes add up per device.
//
// Pure; thread-safe.
#ifndef SOFTWIRE_COMPILER_PHYSICAL_BOXING_ACTOR_COUNT_H_
#define SOFTWIRE_COMPILER_PHYSICAL_BOXING_ACTOR_COUNT_H_

#include "placement/boxing_plan.h"

namespace softwire {
namespace compiler {

// `plan` is PlanBoxing's or PlanGradientSync's answer to `request`. With `bucketed` (a gradient
// whose all-reduces insert_boxing fuses into a gradient bucket), the all-reduce steps count no
// actors: the bucket's ring is shared by every gradient in it. 0 when nothing is needed.
int BoxingActorsPerDevice(const placement::BoxingPlan& plan,
                          const placement::BoxingRequest& request, bool bucketed = false);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_PHYSICAL_BOXING_ACTOR_COUNT_H_
