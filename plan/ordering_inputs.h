// Ordering inputs (docs/PROTOCOL.md, "Ordering inputs"): an actor may wait for a register it
// does not read. KernelDef.input describes, in order, the inputs the kernel reads; when it is
// not empty and shorter than input_register, the input registers after those it describes are
// ordering inputs. The protocol counts them like any input (the actor fires once their fill is
// Ready, and releases the fill when the firing completes), so register lifetimes, the deadlock
// check and every engine's firing rule see them with no change; only the kernel does not: the
// engines bind the first KernelInputCount inputs to it. An empty KernelDef.input (hand-built
// plans) means the kernel reads every input as its register holds it.
//
// Why no field of its own: KernelDef.input is already what the kernel reads (a view's shape,
// docs/PROTOCOL.md "Views"), so a separate count would be a second statement of the same fact
// that a check would have to hold equal to it; and no protocol message changes.
//
// Pure functions; thread-safe.
#ifndef SOFTWIRE_PLAN_ORDERING_INPUTS_H_
#define SOFTWIRE_PLAN_ORDERING_INPUTS_H_

#include "base/status.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace plan {

// The inputs the kernel reads: kernel.input_size() when it is not empty, else every input;
// never more than the actor's inputs.
int KernelInputCount(const proto::ActorDef& actor);

// The ordering inputs: input_register_size - KernelInputCount.
int OrderingInputCount(const proto::ActorDef& actor);

// True when input `index` of `actor` is an ordering input.
bool IsOrderingInput(const proto::ActorDef& actor, int index);

// The plan invariant for ordering inputs (plan_invariants.h, run after the phases): no kernel
// describes more inputs than its actor reads; only compute actors have ordering inputs; each
// ordering input is read in phase 0 and lies on the actor's device; and the actor graph (an edge
// from each register's producer to each consumer) has no cycle through an ordering edge, since such
// an actor would wait for its own output (the plan would deadlock). The cycle search runs only
// when some actor has ordering inputs. InvalidArgument naming the actor and register at fault;
// a cycle names an ordering edge on it. Cost: linear in actors, registers and reads.
Status CheckOrderingInputs(const proto::Plan& plan);

}  // namespace plan
}  // namespace softwire

#endif  // SOFTWIRE_PLAN_ORDERING_INPUTS_H_
