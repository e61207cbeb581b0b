// GradientBuilder: what an op's gradient rule sees while autodiff differentiates one forward
// op. The rule reads the forward op's tensors, the gradients of its outputs, and which input
// gradients are wanted, adds backward ops, and records the gradient of each wanted input.
//
// Backward ops are named after the forward op: the gradient of matmul `fc1`'s input `b` is
// op (and tensor) `fc1.grad_b`; helper steps get a further suffix (`fc1.grad_b.flatten_a`).
//
//   Status MatmulGradient(GradientBuilder& g) {
//     if (g.wants(0)) {
//       SOFTWIRE_ASSIGN_OR_RETURN(TensorId da, g.Add("a", "matmul", {g.output_gradient(0),
//                                                    g.input(1)}, TransposeB()));
//       g.SetInputGradient(0, da);
//     }
//     ...
//   }
#ifndef SOFTWIRE_COMPILER_OPS_GRADIENT_BUILDER_H_
#define SOFTWIRE_COMPILER_OPS_GRADIENT_BUILDER_H_

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/logical_graph.h"
#include "compiler/ops/graph_builder.h"

namespace softwire {
namespace compiler {

class GradientBuilder {
 public:
  // `output_gradients[i]` is the gradient of the forward op's output i, if any reaches it;
  // `wanted_inputs[i]` says whether input i needs a gradient. Borrows `builder`.
  GradientBuilder(GraphBuilder& builder, OpId forward_op,
                  std::vector<std::optional<TensorId>> output_gradients,
                  std::vector<bool> wanted_inputs);

  const LogicalOp& forward() const { return builder_.graph().op(forward_op_); }
  const AttributeMap& attributes() const { return forward().attributes; }
  TensorId input(int index) const { return forward().inputs.at(index); }
  TensorId output(int index) const { return forward().outputs.at(index); }
  const TensorType& type(TensorId tensor) const { return builder_.graph().tensor(tensor).type; }
  const Shape& shape(TensorId tensor) const { return type(tensor).shape; }

  bool wants(int input_index) const { return wanted_inputs_.at(input_index); }
  bool has_output_gradient(int index) const { return output_gradients_.at(index).has_value(); }
  // CHECK-fails when output `index` has no gradient.
  TensorId output_gradient(int index) const;

  // Adds a single-output op named "<forward>.grad_<suffix>"; returns its output tensor.
  StatusOr<TensorId> Add(const std::string& suffix, const std::string& type,
                         std::vector<TensorId> inputs, AttributeMap attributes = {});
  // Adds an op named "<forward>.grad_<suffix>" ("<forward>.grad" for an empty suffix) whose
  // outputs are named
  // "<forward>.grad_<output_suffixes[i]>"; returns them.
  StatusOr<std::vector<TensorId>> AddWithOutputs(const std::string& suffix, const std::string& type,
                                                 std::vector<TensorId> inputs,
                                                 AttributeMap attributes,
                                                 const std::vector<std::string>& output_suffixes);
  // `value` summed back to `shape` (sum_to_shape) when its shape differs, else `value`.
  StatusOr<TensorId> SumToShape(const std::string& suffix, TensorId value, const Shape& shape);

  // Records the gradient of input `input_index`. CHECKs that it is wanted and not yet set.
  void SetInputGradient(int input_index, TensorId gradient);
  const std::vector<std::optional<TensorId>>& input_gradients() const { return input_gradients_; }

 private:
  std::string NameFor(const std::string& suffix) const;

  GraphBuilder& builder_;
  OpId forward_op_;
  std::vector<std::optional<TensorId>> output_gradients_;
  std::vector<bool> wanted_inputs_;
  std::vector<std::optional<TensorId>> input_gradients_;
};

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_OPS_GRADIENT_BUILDER_H_
