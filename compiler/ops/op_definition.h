// OpDefinition: everything the compiler knows about one op type of docs/OPS.md: its inputs and
// outputs, attribute schema, shape and dtype inference, gradient rule, cost, and how its actor
// behaves in the plan (kind, period, in-place input, persistent state).
//
// Definitions are plain values collected in an OpRegistry (op_registry.h); each op family adds
// its definitions from its own file (matmul_ops.cc, ...). Inference and gradient functions are
// pure functions of their context: no globals, safe to call from any thread on distinct
// contexts.
#ifndef SOFTWIRE_COMPILER_OPS_OP_DEFINITION_H_
#define SOFTWIRE_COMPILER_OPS_OP_DEFINITION_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/attribute_map.h"
#include "compiler/ir/tensor_type.h"
#include "placement/sbp.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace compiler {

class GradientBuilder;
class InferenceContext;

// One attribute of the schema: required, or with a default (whose kind is the attribute's).
struct AttributeSpec {
  std::string name;
  AttributeKind kind = AttributeKind::kInt;
  bool required = true;
  AttributeValue default_value;  // Meaningful when !required.
};

AttributeSpec RequiredAttribute(const std::string& name, AttributeKind kind);
AttributeSpec AttributeWithDefault(const std::string& name, AttributeValue default_value);

// How an op's period (pieces per firing, and per value of its outputs) follows.
enum class PeriodRule {
  kFollowInputs,  // Per step when it has inputs and all are per step; else per piece.
  kPerPiece,      // Always per piece (source, sink).
  kPerStep,       // Always per step (fill, variable, optimizer updates).
  kAccumulate,    // Fires per piece; its output holds one value per step.
};

// Who may write the op in a job file.
enum class OpUsage {
  kUser,       // Listed under "User ops" in docs/OPS.md.
  kInternal,   // Created by the compiler, but users may write it too.
  kActorKind,  // Only the compiler creates it (source, variable, accumulate, update, sink).
};

// Work of one firing, for the cost model.
struct OpCost {
  double flops = 0;
  double bytes = 0;  // Bytes read and written.
  // The flops are a product's multiply-adds (matmul, batch_matmul, convolutions), which run at
  // the device's bf16 product rate when the inputs are bf16 (placement/cost_model.h).
  bool product = false;
};

// The types and attributes of one op instance, for cost and state functions.
struct OpSignature {
  const std::vector<TensorType>& inputs;
  const std::vector<TensorType>& outputs;
  const AttributeMap& attributes;
};

// One valid way to run an op along one mesh axis (docs/PARALLELISM.md, "Sbp"): the sbp of each
// input and each output, e.g. matmul's (S(0), B) -> S(0).
struct SbpSignature {
  std::vector<placement::Sbp> inputs;
  std::vector<placement::Sbp> outputs;

  bool operator==(const SbpSignature& other) const {
    return inputs == other.inputs && outputs == other.outputs;
  }
};

// One physical instance of an op, for `localize`: the logical types, the local types this
// instance reads and writes, the box of the logical tensor each local value holds, and the
// attributes to rewrite (docs/OPS.md, "Physical attributes").
struct PhysicalContext {
  const std::vector<TensorType>& logical_inputs;
  const std::vector<TensorType>& logical_outputs;
  const std::vector<TensorType>& local_inputs;
  const std::vector<TensorType>& local_outputs;
  const std::vector<placement::TensorBox>& input_boxes;
  const std::vector<placement::TensorBox>& output_boxes;
  AttributeMap& attributes;
};

struct OpDefinition {
  std::string type;
  OpUsage usage = OpUsage::kUser;
  // Input names as docs/OPS.md writes them ("a", "b"). With `variadic_inputs`, a single name
  // `x` stands for x0, x1, ... and at least `min_inputs` are required.
  std::vector<std::string> input_names;
  bool variadic_inputs = false;
  int min_inputs = 0;
  // How many of the last input_names a job may leave out (conv2d's bias). Not with variadic.
  int optional_inputs = 0;
  // Output names; with `variadic_outputs` (sources) any count of one or more.
  std::vector<std::string> output_names;
  bool variadic_outputs = false;
  std::vector<AttributeSpec> attributes;

  // Sets every output's type from the inputs and attributes, or fails with InvalidArgument
  // naming the input or attribute at fault (the caller adds the op's name and line).
  std::function<Status(InferenceContext&)> infer;
  // Adds the ops that compute input gradients. Empty: the op is not differentiable.
  std::function<Status(GradientBuilder&)> gradient;
  // Work per firing. Empty: one flop per output element, bytes of inputs and outputs.
  std::function<OpCost(const OpSignature&)> cost;
  // Persistent bytes the actor keeps across firings (optimizer moments). Empty: none.
  std::function<int64_t(const OpSignature&)> state_bytes;
  // The valid 1D sbp signatures for these logical types, besides all-broadcast (which is always
  // valid and which SbpSignaturesOf adds). Splits need not divide evenly here: the compiler
  // drops signatures whose splits are uneven on the mesh. Empty function: all-broadcast only.
  std::function<std::vector<SbpSignature>(const OpSignature&)> sbp_signatures;
  // Rewrites the attributes of a physical instance that spell logical shapes or counts (a
  // reshape's `shape`, reduce_mean's `divisor`, ...). Empty: attributes stay as they are.
  std::function<void(PhysicalContext&)> localize;

  proto::ActorKind actor_kind = proto::ACTOR_KIND_COMPUTE;
  PeriodRule period_rule = PeriodRule::kFollowInputs;
  // Input read in phase 1 and updated in place (update ops); -1: none.
  int in_place_input = -1;

  // The display name of input `index`: input_names[index], or "x<index>" when variadic.
  std::string InputName(int index) const;
  std::string OutputName(int index) const;
  const AttributeSpec* FindAttribute(const std::string& name) const;
};

// What an inference function sees and sets.
class InferenceContext {
 public:
  // `declared_outputs` are the types outputs already carry (set for sources and variables
  // from the job; unknown otherwise).
  InferenceContext(const OpDefinition& definition, std::vector<TensorType> inputs,
                   const AttributeMap& attributes, std::vector<TensorType> declared_outputs);

  int input_count() const { return static_cast<int>(inputs_.size()); }
  int output_count() const { return static_cast<int>(outputs_.size()); }
  const TensorType& input(int index) const;
  const Shape& input_shape(int index) const { return input(index).shape; }
  const AttributeMap& attributes() const { return attributes_; }
  const TensorType& declared_output(int index) const;

  void SetOutput(int index, TensorType type);
  const std::vector<TensorType>& outputs() const { return outputs_; }

  // "input 'a'".
  std::string InputLabel(int index) const;
  // InvalidArgument "input 'labels' must be int32, got float32[8]".
  Status RequireDType(int index, DType dtype) const;
  // InvalidArgument "input 'x' must be float32 or bfloat16, got int32[8]": the ops that keep
  // bf16 activations between convolutions (docs/PRECISION.md) read either.
  Status RequireFloatingDType(int index) const;
  // InvalidArgument "input 'x' must have rank >= 2, got float32[8]".
  Status RequireRankAtLeast(int index, int rank) const;
  Status RequireRank(int index, int rank) const;
  // InvalidArgument "input 'b' must be float32[8, 4] like input 'a', got float32[4]".
  Status RequireSameType(int index, int like_index) const;

 private:
  const OpDefinition& definition_;
  std::vector<TensorType> inputs_;
  const AttributeMap& attributes_;
  std::vector<TensorType> declared_outputs_;
  std::vector<TensorType> outputs_;
};

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_OPS_OP_DEFINITION_H_
