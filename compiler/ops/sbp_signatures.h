// Building blocks for the op families' sbp signatures (OpDefinition::sbp_signatures), and the
// list the compiler chooses from.
//
//   definition.sbp_signatures = [](const OpSignature& op) {
//     std::vector<SbpSignature> signatures = BroadcastingSplits(op);
//     signatures.push_back(AllPartial(2, 1));  // add: P + P -> P
//     return signatures;
//   };
#ifndef SOFTWIRE_COMPILER_OPS_SBP_SIGNATURES_H_
#define SOFTWIRE_COMPILER_OPS_SBP_SIGNATURES_H_

#include <vector>

#include "compiler/ops/op_definition.h"

namespace softwire {
namespace compiler {

// All-broadcast first, then the definition's own signatures, without duplicates.
std::vector<SbpSignature> SbpSignaturesOf(const OpDefinition& definition,
                                          const OpSignature& signature);

// For each axis i of output 0: the output split on i, each input split on its matching axis
// (NumPy broadcasting aligns the last axes) or broadcast where it lacks the axis or has
// extent 1 there. Covers elementwise ops of any arity.
std::vector<SbpSignature> BroadcastingSplits(const OpSignature& signature);

// Like BroadcastingSplits, but only for output axes below `limit` (ops that reduce over the
// axes from `limit` on, like softmax over the last one).
std::vector<SbpSignature> BroadcastingSplitsBelow(const OpSignature& signature, int limit);

// Every input and output partial: a linear op of partial values.
SbpSignature AllPartial(int inputs, int outputs);

// Input `partial_input` partial, the others broadcast, every output partial: an op linear in
// that one input (mul, relu_grad's dy).
SbpSignature PartialThrough(int inputs, int partial_input, int outputs);

// Shorthands.
SbpSignature Signature(std::vector<placement::Sbp> inputs, std::vector<placement::Sbp> outputs);
placement::Sbp S(int axis);
extern const placement::Sbp kB;
extern const placement::Sbp kP;

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_OPS_SBP_SIGNATURES_H_
