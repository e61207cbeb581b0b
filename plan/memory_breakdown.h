// MemoryBreakdown: what the planned bytes of one device hold, by what each byte is for, and
// what views, lifetime-based reuse and in-place ops saved (issue 14, item 5).
//
// A device's arena (plan.proto PlanDevice) is registers, then workspaces, then actor state.
// Each register gets one role from what it holds, the first rule that applies:
//   weights           written by a VARIABLE actor (a variable's value), or by a compute `cast`
//                     whose input is weights (the bf16 copy of a variable, made once a step);
//   transfer buffers  written by a COPY, SEND, RECV or BOXING actor (a value moved between
//                     devices, gradient all-reduce buckets included);
//   gradients         a gradient of a variable: an input of an UPDATE actor that applies an
//                     optimizer, other than the variable it updates, and, from there backwards,
//                     every input of the ACCUMULATE, BOXING, COPY, SEND, RECV, compute `cast`
//                     and `add_n` actors that made one (the per-piece gradient an accumulate
//                     sums, the parts of an all-reduce);
//   kept activations  written by a forward actor and read by an actor outside the forward pass:
//                     forward actors are the SINK actors' ancestors (what the loss and metrics
//                     are computed from), so a kept activation is a forward value that backward
//                     (or a transfer towards it) reads: the batch, layer outputs, probabilities;
//   transient         everything else: forward values only the forward pass reads, the
//                     gradients of activations, the loss seed.
// Actor state: `optimizer state` is the state of UPDATE actors that apply an optimizer
// (momentum, Adam's moments); `other state` the other actors' state. `workspaces` are the
// kernels' scratch.
//
// Registers that share bytes (RegisterDef.shares_bytes_with) give one arena byte several
// roles over a step; each byte of the register region counts once, for the first role in the
// order above that some register covering it has, and `padding` counts the bytes no register
// and no actor's state covers (alignment). So the nine figures sum to planned_bytes exactly.
//
// Saved: `reuse` + `in_place` = the registers' bytes side by side (RegisterBytesWithoutSharing)
// minus register_bytes. `in_place` is the bytes of each register laid out exactly over an input
// of its producer that KernelMayWriteOver allows (docs/PROTOCOL.md, "In-place ops"); `reuse` is
// the rest. `views` is PlanDevice.view_bytes: one fill of every copy fold_views removed (the
// compiler's figure; a view's slot count was never planned, so this is one fill each).
//
// Pure; reads the plan only.
#ifndef SOFTWIRE_PLAN_MEMORY_BREAKDOWN_H_
#define SOFTWIRE_PLAN_MEMORY_BREAKDOWN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/plan.pb.h"

namespace softwire {
namespace plan {

enum class RegisterRole { kWeights, kTransfer, kGradients, kKeptActivations, kTransient };

// "weights", "transfer", "gradients", "kept activations", "transient".
const char* RegisterRoleName(RegisterRole role);

// The role of every register of `plan` (index = register id), by the rules above.
std::vector<RegisterRole> RegisterRoles(const proto::Plan& plan);

struct MemoryBreakdown {
  // Of planned_bytes; they sum to it.
  int64_t weights = 0;
  int64_t gradients = 0;
  int64_t optimizer_state = 0;
  int64_t kept_activations = 0;
  int64_t transient = 0;
  int64_t transfer = 0;
  int64_t workspaces = 0;
  int64_t other_state = 0;
  int64_t padding = 0;
  // Each role's registers side by side (slots x bytes per slot), before any sharing.
  int64_t unshared_weights = 0;
  int64_t unshared_gradients = 0;
  int64_t unshared_kept_activations = 0;
  int64_t unshared_transient = 0;
  int64_t unshared_transfer = 0;
  // What sharing and folding saved.
  int64_t saved_by_views = 0;
  int64_t saved_by_reuse = 0;
  int64_t saved_by_in_place = 0;

  int64_t Total() const {
    return weights + gradients + optimizer_state + kept_activations + transient + transfer +
           workspaces + other_state + padding;
  }
};

// The breakdown of device `device` of `plan`.
MemoryBreakdown BreakDownMemory(const proto::Plan& plan, int device);

// One line: "weights 7.1 MiB, gradients 7.1 MiB, ... ; saved: views 0 B, reuse 6.0 MiB,
// in place 0 B".
std::string DescribeMemoryBreakdown(const MemoryBreakdown& breakdown);

}  // namespace plan
}  // namespace softwire

#endif  // SOFTWIRE_PLAN_MEMORY_BREAKDOWN_H_
