// Which activations stay bfloat16 between convolutions under --precision bf16
// (docs/PRECISION.md, "Activations between convolutions"); apply_precision applies the choice.
//
// The rule, on the float32 graph after autodiff:
// - Group ops tie their image operands (rank 4) to one dtype: batch_norm (x, y), batch_norm_grad
//   (dy, x, dx), relu (x, y), relu_grad (dy, y, dx), add of two operands of one shape (a, b, c)
//   and add_n (every input, y). The tied tensors form groups (union-find).
// - A group is bf16 when it holds the output of a convolution that can write bf16 (conv2d, the
//   activation; conv2d_grad_input, the activation's gradient): the group then lies between
//   convolutions, where autocast keeps bf16 too.
// - Within a bf16 group, a tensor written by a convolution or a group op is stored in bf16
//   (`stored`); one written by anything else (global_avg_pool_grad, a source) stays float32
//   and the group's ops read a bf16 cast of it (`widened`).
// - Readers of a stored tensor that take bf16 as it is: the group ops, the convolutions' image
//   operands (x of conv2d, dy of conv2d_grad_input, dy and x of conv2d_grad_filter),
//   batch_norm_statistics and global_avg_pool. Any other reader gets a float32 cast.
// Plain MLPs and transformers have no convolution, so nothing changes for them.
//
// Pure function of the graph; thread-compatible.
#ifndef SOFTWIRE_COMPILER_PASSES_ACTIVATION_PRECISION_H_
#define SOFTWIRE_COMPILER_PASSES_ACTIVATION_PRECISION_H_

#include <map>
#include <string>
#include <vector>

#include "compiler/ir/logical_graph.h"

namespace softwire {
namespace compiler {

struct ActivationPrecision {
  std::vector<TensorId> stored;            // Stored in bf16, in tensor id order.
  std::vector<TensorId> widened;           // float32 members of bf16 groups.
  std::map<TensorId, std::string> reason;  // Per stored tensor, for --explain.
};

ActivationPrecision ChooseActivationPrecision(const LogicalGraph& graph);

// conv2d and conv2d_grad_input: their output_dtype attribute may say bfloat16.
bool IsConvolutionWritingActivations(const std::string& op_type);

// Whether `use` reads a bf16 activation as it is (the readers listed above).
bool ReadsBFloat16Activation(const LogicalGraph& graph, const TensorUse& use);

// Whether `use` is an image operand of a group op (its dtype tied to the op's output).
bool IsActivationGroupInput(const LogicalGraph& graph, const TensorUse& use);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_PASSES_ACTIVATION_PRECISION_H_
