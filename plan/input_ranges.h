// Range views (docs/PROTOCOL.md, "Views"): a kernel input may start at a byte offset into its
// register's slot, KernelDef.input_offset[k], and read bytes(KernelDef.input[k]) bytes from
// there, fewer than the register holds: a chunk of a flat value read where it lies instead of
// copied out of it (compiler/passes/fold_views_pass.cc folds a `flat_split` so). Any kernel
// input may be a range, and so may a send's input (it sends the range's bytes); the engines bind
// input k to slot + offset. Nothing else changes: the reader is a consumer of the whole register
// (it gets its Ready, releases its fills, and its firings count in the register's lifetime).
//
// Pure functions; thread-safe.
#ifndef SOFTWIRE_PLAN_INPUT_RANGES_H_
#define SOFTWIRE_PLAN_INPUT_RANGES_H_

#include <cstdint>

#include "base/status.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace plan {

// The byte of its register's slot at which kernel input `index` of `actor` starts: 0 unless the
// kernel gives offsets. `index` < KernelInputCount(actor).
int64_t InputOffset(const proto::ActorDef& actor, int index);

// True when kernel input `index` reads only part of its register (an offset, or fewer bytes).
bool IsRangeInput(const proto::Plan& plan, const proto::ActorDef& actor, int index);

// The plan invariant for ranges (plan_invariants.h, run after the ordering inputs): input_offset
// is empty or has one entry per described input; each range [offset, offset + bytes(input[k]))
// lies within its register's tensor bytes, starts at a multiple of the element size, and has the
// register's dtype. InvalidArgument naming the actor, the input and the register, e.g. "actor
// 'send:g.c1@1' (4): input 0 reads 64 bytes from byte 96 of register 'g@0' (2), which holds
// 128: the range leaves the slot".
Status CheckInputRanges(const proto::Plan& plan);

}  // namespace plan
}  // namespace softwire

#endif  // SOFTWIRE_PLAN_INPUT_RANGES_H_
