#include "compiler/ir/logical_graph.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <utility>

namespace softwire {
namespace compiler {

StatusOr<TensorId> LogicalGraph::AddTensor(const std::string& name, TensorType type) {
  ++version_;
  if (tensor_by_name_.count(name) > 0) {
    return InvalidArgumentError("tensor '" + name + "' is defined twice");
  }
  LogicalTensor tensor;
  tensor.id = static_cast<TensorId>(tensors_.size());
  tensor.name = name;
  tensor.type = std::move(type);
  tensor_by_name_[name] = tensor.id;
  tensors_.push_back(std::move(tensor));
  return tensors_.back().id;
}

StatusOr<OpId> LogicalGraph::AddOp(NewOp new_op) {
  ++version_;
  if (op_by_name_.count(new_op.name) > 0) {
    return InvalidArgumentError("op name '" + new_op.name + "' is used twice");
  }
  for (TensorId output : new_op.outputs) {
    const LogicalTensor& produced = tensor(output);
    if (produced.producer >= 0) {
      return InvalidArgumentError("tensor '" + produced.name + "' is already produced by op '" +
                                  ops_[produced.producer].name + "'");
    }
  }
  for (TensorId input : new_op.inputs) tensor(input);  // CHECKs the id.

  LogicalOp op;
  op.id = static_cast<OpId>(ops_.size());
  op.name = std::move(new_op.name);
  op.type = std::move(new_op.type);
  op.inputs = std::move(new_op.inputs);
  op.outputs = std::move(new_op.outputs);
  op.attributes = std::move(new_op.attributes);
  op.line = new_op.line;
  op.gradient_of = std::move(new_op.gradient_of);
  op.stage = new_op.stage;
  op.sbp_hint = std::move(new_op.sbp_hint);
  op.sequence = op.id;
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    tensors_[op.outputs[i]].producer = op.id;
    tensors_[op.outputs[i]].producer_output = static_cast<int>(i);
  }
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    tensors_[op.inputs[i]].consumers.push_back({op.id, static_cast<int>(i)});
  }
  op_by_name_[op.name] = op.id;
  ops_.push_back(std::move(op));
  return ops_.back().id;
}

void LogicalGraph::ReplaceInput(OpId op_id, int input_index, TensorId tensor_id) {
  LogicalOp& op = mutable_op(op_id);
  CHECK(input_index >= 0 && input_index < static_cast<int>(op.inputs.size()))
      << "op '" << op.name << "' has no input " << input_index;
  tensor(tensor_id);  // CHECKs the id.
  std::vector<TensorUse>& old_uses = tensors_[op.inputs[input_index]].consumers;
  for (auto use = old_uses.begin(); use != old_uses.end(); ++use) {
    if (use->op == op_id && use->input_index == input_index) {
      old_uses.erase(use);
      break;
    }
  }
  op.inputs[input_index] = tensor_id;
  tensors_[tensor_id].consumers.push_back({op_id, input_index});
}

namespace {

std::string UniqueName(const std::string& base,
                       const std::function<bool(const std::string&)>& taken) {
  if (!taken(base)) return base;
  for (int suffix = 2;; ++suffix) {
    std::string candidate = base + "_" + std::to_string(suffix);
    if (!taken(candidate)) return candidate;
  }
}

}  // namespace

std::string LogicalGraph::UniqueTensorName(const std::string& base) const {
  return UniqueName(base, [this](const std::string& name) { return FindTensor(name).has_value(); });
}

std::string LogicalGraph::UniqueOpName(const std::string& base) const {
  return UniqueName(base, [this](const std::string& name) { return FindOp(name).has_value(); });
}

const LogicalOp& LogicalGraph::op(OpId id) const {
  CHECK(id >= 0 && id < op_count()) << "op id " << id << " out of range";
  return ops_[id];
}

LogicalOp& LogicalGraph::mutable_op(OpId id) {
  CHECK(id >= 0 && id < op_count()) << "op id " << id << " out of range";
  ++version_;
  return ops_[id];
}

const LogicalTensor& LogicalGraph::tensor(TensorId id) const {
  CHECK(id >= 0 && id < tensor_count()) << "tensor id " << id << " out of range";
  return tensors_[id];
}

LogicalTensor& LogicalGraph::mutable_tensor(TensorId id) {
  CHECK(id >= 0 && id < tensor_count()) << "tensor id " << id << " out of range";
  ++version_;
  return tensors_[id];
}

std::optional<OpId> LogicalGraph::FindOp(const std::string& name) const {
  auto found = op_by_name_.find(name);
  if (found == op_by_name_.end()) return std::nullopt;
  return found->second;
}

std::optional<TensorId> LogicalGraph::FindTensor(const std::string& name) const {
  auto found = tensor_by_name_.find(name);
  if (found == tensor_by_name_.end()) return std::nullopt;
  return found->second;
}

StatusOr<std::vector<OpId>> LogicalGraph::TopologicalOrder(OpId* first_on_cycle) const {
  std::vector<int> pending_inputs(ops_.size(), 0);
  for (const LogicalOp& op : ops_) {
    for (TensorId input : op.inputs) {
      if (tensors_[input].producer >= 0) ++pending_inputs[op.id];
    }
  }
  using Position = std::pair<double, OpId>;
  std::priority_queue<Position, std::vector<Position>, std::greater<Position>> ready;
  for (const LogicalOp& op : ops_) {
    if (pending_inputs[op.id] == 0) ready.push({op.sequence, op.id});
  }
  std::vector<OpId> order;
  while (!ready.empty()) {
    OpId next = ready.top().second;
    ready.pop();
    order.push_back(next);
    for (TensorId output : ops_[next].outputs) {
      for (const TensorUse& use : tensors_[output].consumers) {
        if (--pending_inputs[use.op] == 0) ready.push({ops_[use.op].sequence, use.op});
      }
    }
  }
  if (order.size() == ops_.size()) return order;

  std::vector<OpId> cycle = FindCycle(pending_inputs);
  if (first_on_cycle != nullptr) *first_on_cycle = cycle.front();
  std::string text;
  for (OpId id : cycle) text += "'" + ops_[id].name + "' -> ";
  text += "'" + ops_[cycle.front()].name + "'";
  return InvalidArgumentError("ops form a cycle: " + text);
}

// Walks backwards from an op that never became ready, always to a producer that never became
// ready either; in a finite graph the walk must revisit an op, and the revisited stretch is a
// cycle. Returned in data-flow order, starting at its smallest op id.
std::vector<OpId> LogicalGraph::FindCycle(const std::vector<int>& pending_inputs) const {
  OpId start = -1;
  for (const LogicalOp& op : ops_) {
    if (pending_inputs[op.id] > 0) {
      start = op.id;
      break;
    }
  }
  CHECK_GE(start, 0);
  std::vector<OpId> walk;
  std::map<OpId, size_t> position;
  OpId current = start;
  while (position.count(current) == 0) {
    position[current] = walk.size();
    walk.push_back(current);
    OpId next = -1;
    for (TensorId input : ops_[current].inputs) {
      OpId producer = tensors_[input].producer;
      if (producer >= 0 && pending_inputs[producer] > 0) {
        next = producer;
        break;
      }
    }
    CHECK_GE(next, 0) << "op '" << ops_[current].name << "' is blocked without a blocked input";
    current = next;
  }
  std::vector<OpId> cycle(walk.rbegin(), walk.rend() - position[current]);
  // Start at the op that comes first in the job, which reads best in a message.
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  return cycle;
}

namespace {

Status Broken(const std::string& message) {
  return InternalError("logical graph invariant broken: " + message);
}

}  // namespace

// Names are checked by walking the name maps once (every entry names an element of that id,
// and there are as many entries as elements) rather than by a lookup per element: Verify runs
// after every pass.
Status LogicalGraph::Verify() const {
  if (tensor_by_name_.size() != tensors_.size() || op_by_name_.size() != ops_.size()) {
    return Broken("the name index and the elements differ in number");
  }
  for (const auto& [name, id] : tensor_by_name_) {
    if (id < 0 || id >= tensor_count() || tensors_[id].name != name) {
      return Broken("tensor '" + name + "' is not found under its own name");
    }
  }
  for (const auto& [name, id] : op_by_name_) {
    if (id < 0 || id >= op_count() || ops_[id].name != name) {
      return Broken("op '" + name + "' is not found under its own name");
    }
  }
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const LogicalTensor& tensor = tensors_[i];
    if (tensor.id != static_cast<TensorId>(i)) return Broken("tensor id differs from its index");
    if (tensor.producer < 0 || tensor.producer >= op_count()) {
      return Broken("tensor '" + tensor.name + "' has no producer");
    }
    const LogicalOp& producer = ops_[tensor.producer];
    if (tensor.producer_output >= static_cast<int>(producer.outputs.size()) ||
        producer.outputs[tensor.producer_output] != tensor.id) {
      return Broken("tensor '" + tensor.name + "' is not an output of its producer '" +
                    producer.name + "'");
    }
    for (const TensorUse& use : tensor.consumers) {
      if (use.op < 0 || use.op >= op_count() ||
          use.input_index >= static_cast<int>(ops_[use.op].inputs.size()) ||
          ops_[use.op].inputs[use.input_index] != tensor.id) {
        return Broken("tensor '" + tensor.name + "' lists a consumer that does not read it");
      }
    }
  }
  for (size_t i = 0; i < ops_.size(); ++i) {
    const LogicalOp& op = ops_[i];
    if (op.id != static_cast<OpId>(i)) return Broken("op id differs from its index");
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      TensorId input = op.inputs[k];
      if (input < 0 || input >= tensor_count()) return Broken("op '" + op.name + "' input id");
      int uses = 0;
      for (const TensorUse& use : tensors_[input].consumers) {
        if (use.op == op.id && use.input_index == static_cast<int>(k)) ++uses;
      }
      if (uses != 1) {
        return Broken("op '" + op.name + "' reads '" + tensors_[input].name +
                      "' but is not listed once among its consumers");
      }
    }
    for (TensorId output : op.outputs) {
      if (output < 0 || output >= tensor_count() || tensors_[output].producer != op.id) {
        return Broken("op '" + op.name + "' lists an output it does not produce");
      }
    }
  }
  StatusOr<std::vector<OpId>> order = TopologicalOrder();
  if (!order.ok()) return Broken(order.status().message());
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
