// The rules each actor kind puts on its actor in a plan (docs/PROTOCOL.md, "Actor kinds"),
// written once for every layer: the compiler runs them on every plan it emits
// (compiler/emitted_plan_check.h), and the engines (actors/'s DescribeActors, hence the runtime
// and the simulator) on every plan they load.
//
// Per kind, with P the actor's period and S the schedule's pieces_per_step ("as the value":
// every register the actor reads and writes has period P):
//
//   kind        inputs                      outputs                      P        settings
//   source      none                        >= 1, one per dataset output 1        a dataset, a
//                                                                                 non-empty sample
//                                                                                 slice; as the
//                                                                                 value
//   compute     any (longer periods too)    >= 1, of period P            1 or S   an op type
//   variable    none                        1, of 1 slot                 S        the variable's
//                                                                                 name; as the
//                                                                                 value
//   accumulate  1, of period 1              1, of period S (the sum)     1
//   update      2: gradient (phase 0) and   none                         S        an optimizer;
//               variable (phase 1, written                                        as the value
//               by a variable actor)
//   sink        1 float32 scalar            none                         1        the output's name
//   copy        1                           1: the same tensor, or for   any      as the value
//                                           `slice` a block of it
//   send        1                           at most 1, read by recv only any      as the value
//   recv        at most 1, written by send  1                            any      as the value
//   boxing      any (none: a fill of zeros) >= 1                         any      as the value
//
// Every kind: max_in_flight is 0 (unset, meaning 1) or more; above 1 only for compute and copy
// actors, whose kernels run on a device queue, and send actors, whose transfers the data plane
// writes in order (docs/PROTOCOL.md, "Several firings in flight"). Sources, sinks, variables,
// accumulate and update actors, recv and boxing stay at 1.
//
// And of the plan as a whole: every actor has one of these kinds; each PlanOutput is reported
// by a sink actor naming it; each variable part is written by a variable actor.
//
// Every failure is InvalidArgument naming what is at fault with plan/labels.h, an actor with its
// kind: "actor 'acc' (1): accumulate actor writes a per-step sum, so register 'sum' (1) must
// have period 2, has 1"; "output 'loss': actor 'x' (3) is not a sink reporting it".
// Precondition: CheckPlanInvariants (plan/plan_invariants.h) accepted the plan; the rules rely
// on its ids being in range and its consumer lists matching the readers.
// Pure functions; thread-safe. Cost: linear in the plan's actors and register consumers.
#ifndef SOFTWIRE_PLAN_ACTOR_KIND_RULES_H_
#define SOFTWIRE_PLAN_ACTOR_KIND_RULES_H_

#include <cstdint>

#include "base/status.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace plan {

// Every rule above: each actor's kind in plan order, then the outputs, then the variables.
Status CheckActorKindRules(const proto::Plan& plan);

// The rules of `actor`'s kind, or that it has one ("actor 'a' (0): has no kind").
Status CheckActorKind(const proto::Plan& plan, const proto::ActorDef& actor);

// The firings `actor` may have launched and not completed at once: max_in_flight, where 0
// (unset) means 1.
int32_t MaxInFlight(const proto::ActorDef& actor);

// Each PlanOutput is reported by a sink actor naming it; each variable part is written by a
// variable actor. Relies on every actor's kind having been checked.
Status CheckOutputsAndVariables(const proto::Plan& plan);

}  // namespace plan
}  // namespace softwire

#endif  // SOFTWIRE_PLAN_ACTOR_KIND_RULES_H_
