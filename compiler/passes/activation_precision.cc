// The activation precision rule (activation_precision.h): groups by union-find over the group
// ops' image operands, bf16 where a convolution writes into the group.
#include "compiler/passes/activation_precision.h"

#include <algorithm>
#include <numeric>

namespace softwire {
namespace compiler {
namespace {

// A rank-4 float32 tensor, or a bf16 one (a cast apply_precision made while it rewrites).
bool IsImage(const LogicalGraph& graph, TensorId tensor) {
  const TensorType& type = graph.tensor(tensor).type;
  return (type.dtype == DType::kFloat32 || type.dtype == DType::kBFloat16) &&
         type.shape.rank() == 4;
}

// The image operands a group op ties to one dtype: its inputs (indices) and its output 0.
// Empty when `op` is no group op (or an add that broadcasts).
std::vector<int> GroupInputs(const LogicalGraph& graph, const LogicalOp& op) {
  std::vector<int> inputs;
  if (op.type == "batch_norm" || op.type == "relu") {
    inputs = {0};
  } else if (op.type == "batch_norm_grad" || op.type == "relu_grad") {
    inputs = {0, 1};
  } else if (op.type == "add") {
    if (graph.tensor(op.inputs[0]).type.shape != graph.tensor(op.inputs[1]).type.shape) return {};
    inputs = {0, 1};
  } else if (op.type == "add_n") {
    inputs.resize(op.inputs.size());
    std::iota(inputs.begin(), inputs.end(), 0);
  }
  if (inputs.empty() || !IsImage(graph, op.outputs[0])) return {};
  for (int input : inputs) {
    if (!IsImage(graph, op.inputs[input])) return {};
  }
  return inputs;
}

class UnionFind {
 public:
  explicit UnionFind(int size) : parent_(static_cast<size_t>(size)) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Join(int a, int b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<int> parent_;
};

}  // namespace

bool IsConvolutionWritingActivations(const std::string& op_type) {
  return op_type == "conv2d" || op_type == "conv2d_grad_input";
}

bool IsActivationGroupInput(const LogicalGraph& graph, const TensorUse& use) {
  const std::vector<int> inputs = GroupInputs(graph, graph.op(use.op));
  return std::find(inputs.begin(), inputs.end(), use.input_index) != inputs.end();
}

bool ReadsBFloat16Activation(const LogicalGraph& graph, const TensorUse& use) {
  const std::string& type = graph.op(use.op).type;
  if (type == "conv2d" || type == "conv2d_grad_input") return use.input_index == 0;
  if (type == "conv2d_grad_filter") return use.input_index <= 1;
  if (type == "batch_norm_statistics" || type == "global_avg_pool") return use.input_index == 0;
  return IsActivationGroupInput(graph, use);
}

ActivationPrecision ChooseActivationPrecision(const LogicalGraph& graph) {
  UnionFind groups(graph.tensor_count());
  for (const LogicalOp& op : graph.ops()) {
    for (int input : GroupInputs(graph, op)) groups.Join(op.inputs[input], op.outputs[0]);
  }
  std::vector<bool> bf16_group(static_cast<size_t>(graph.tensor_count()), false);
  for (const LogicalOp& op : graph.ops()) {
    if (IsConvolutionWritingActivations(op.type) && IsImage(graph, op.outputs[0])) {
      bf16_group[groups.Find(op.outputs[0])] = true;
    }
  }
  ActivationPrecision choice;
  for (TensorId tensor = 0; tensor < graph.tensor_count(); ++tensor) {
    if (!IsImage(graph, tensor) || graph.tensor(tensor).type.dtype != DType::kFloat32 ||
        !bf16_group[groups.Find(tensor)]) {
      continue;
    }
    const LogicalTensor& t = graph.tensor(tensor);
    if (t.producer < 0) continue;
    const LogicalOp& producer = graph.op(t.producer);
    const bool member =
        IsConvolutionWritingActivations(producer.type) || !GroupInputs(graph, producer).empty();
    if (!member) {
      // Only a group op's operand joins a group: this one is read by group ops.
      choice.widened.push_back(tensor);
      continue;
    }
    choice.stored.push_back(tensor);
    choice.reason[tensor] =
        IsConvolutionWritingActivations(producer.type)
            ? "written by " + producer.type + " " + producer.name + " (bf16 output)"
            : producer.type + " " + producer.name + " between convolutions (float32 inside)";
  }
  return choice;
}

}  // namespace compiler
}  // namespace softwire
