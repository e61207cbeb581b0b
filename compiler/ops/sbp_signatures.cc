#include "compiler/ops/sbp_signatures.h"

#include <algorithm>

namespace softwire {
namespace compiler {

const placement::Sbp kB = placement::Sbp::Broadcast();
const placement::Sbp kP = placement::Sbp::Partial();

placement::Sbp S(int axis) {
  return placement::Sbp::Split(axis);
}

SbpSignature Signature(std::vector<placement::Sbp> inputs, std::vector<placement::Sbp> outputs) {
  return SbpSignature{std::move(inputs), std::move(outputs)};
}

std::vector<SbpSignature> SbpSignaturesOf(const OpDefinition& definition,
                                          const OpSignature& signature) {
  std::vector<SbpSignature> signatures;
  signatures.push_back(Signature(std::vector<placement::Sbp>(signature.inputs.size(), kB),
                                 std::vector<placement::Sbp>(signature.outputs.size(), kB)));
  if (!definition.sbp_signatures) return signatures;
  for (SbpSignature& candidate : definition.sbp_signatures(signature)) {
    if (std::find(signatures.begin(), signatures.end(), candidate) == signatures.end()) {
      signatures.push_back(std::move(candidate));
    }
  }
  return signatures;
}

std::vector<SbpSignature> BroadcastingSplitsBelow(const OpSignature& signature, int limit) {
  std::vector<SbpSignature> signatures;
  const Shape& output = signature.outputs.at(0).shape;
  for (int axis = 0; axis < std::min(limit, output.rank()); ++axis) {
    SbpSignature candidate;
    for (const TensorType& input : signature.inputs) {
      const int input_axis = axis - (output.rank() - input.shape.rank());
      bool matches = input_axis >= 0 && input.shape.dim(input_axis) == output.dim(axis);
      candidate.inputs.push_back(matches ? S(input_axis) : kB);
    }
    candidate.outputs.assign(signature.outputs.size(), S(axis));
    signatures.push_back(std::move(candidate));
  }
  return signatures;
}

std::vector<SbpSignature> BroadcastingSplits(const OpSignature& signature) {
  return BroadcastingSplitsBelow(signature, signature.outputs.at(0).shape.rank());
}

SbpSignature AllPartial(int inputs, int outputs) {
  return Signature(std::vector<placement::Sbp>(inputs, kP),
                   std::vector<placement::Sbp>(outputs, kP));
}

SbpSignature PartialThrough(int inputs, int partial_input, int outputs) {
  std::vector<placement::Sbp> in(inputs, kB);
  in[partial_input] = kP;
  return Signature(std::move(in), std::vector<placement::Sbp>(outputs, kP));
}

}  // namespace compiler
}  // namespace softwire
