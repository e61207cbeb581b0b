// The order in which the reference interpreter visits actors within a piece: producers before
// consumers, and every phase-0 reader of a register before its phase-1 (in-place) writer, so
// the update of a variable comes after every read of that step's value. Ties go to the lower
// actor id, so the order is deterministic. Internal to reference/interpreter/.
#ifndef SOFTWIRE_REFERENCE_INTERPRETER_FIRING_ORDER_H_
#define SOFTWIRE_REFERENCE_INTERPRETER_FIRING_ORDER_H_

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace reference {

// Actor ids in firing order. InvalidArgument naming an actor on the cycle when the data edges
// (with the reader-before-writer edges) are cyclic. Ids must already be known to be in range.
StatusOr<std::vector<int64_t>> OrderActors(const proto::Plan& plan);

}  // namespace reference
}  // namespace softwire

#endif  // SOFTWIRE_REFERENCE_INTERPRETER_FIRING_ORDER_H_
