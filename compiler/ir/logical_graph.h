// LogicalGraph: the compiler's first IR. Ops and tensors with integer ids and unique names,
// before anything is split across devices.
//
// Every tensor has exactly one producer op; sources and variables are ops too (of types
// "source" and "variable"), so the graph has no special leaves. Ids are indices and are never
// reused: passes add ops and annotate them but do not delete them, so an id handed out stays
// valid for the whole compilation.
//
// Annotations are filled in by later passes and are "unset" until then: TensorType
// (infer_shapes), period in pieces (infer_periods), OpPlacement (partition_stages and
// choose_sbp).
//
// Threading: none; a graph belongs to one compilation. Failure: structural mistakes a user can
// make (duplicate names, a cycle) are InvalidArgument; broken invariants a pass introduced are
// reported by Verify() as Internal.
#ifndef SOFTWIRE_COMPILER_IR_LOGICAL_GRAPH_H_
#define SOFTWIRE_COMPILER_IR_LOGICAL_GRAPH_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/attribute_map.h"
#include "compiler/ir/tensor_type.h"
#include "placement/sbp.h"

namespace softwire {
namespace compiler {

using OpId = int32_t;
using TensorId = int32_t;

// One read of a tensor: op `op` reads it as its input number `input_index`.
struct TensorUse {
  OpId op = -1;
  int input_index = 0;
};

struct LogicalTensor {
  TensorId id = -1;
  std::string name;
  TensorType type;                   // Unknown until infer_shapes.
  OpId producer = -1;                // Set when the producing op is added.
  int producer_output = 0;           // Which output of the producer.
  std::vector<TensorUse> consumers;  // In the order the reads were added.
  int64_t period = 0;                // Pieces per value; 0 until infer_periods.
};

// What each op is in the training loop; partition_stages assigns it and later passes read it
// (slots: forward activations kept for backward get more).
enum class OpRole { kUnknown, kSource, kVariable, kForward, kSink, kBackward, kOptimizer };

// Where an op runs and how its tensors lie: its pipeline stage, the device mesh (an index
// into Compilation::meshes) and the nd-sbp of every input (as the op reads it, after boxing)
// and output. Filled by partition_stages (role, stage) and choose_sbp (the rest).
struct OpPlacement {
  OpRole role = OpRole::kUnknown;
  int stage = -1;
  int mesh = -1;
  std::vector<placement::NdSbp> inputs;
  std::vector<placement::NdSbp> outputs;
  // What chose it, for --explain: seconds per piece of the chosen signature's compute, input
  // boxing and the boxing of the inputs it feeds, how many candidates were weighed, and the
  // runner-up with its seconds (compute and boxing in and out, the neighbours as chosen).
  double compute_seconds = 0;
  double boxing_seconds = 0;
  double output_boxing_seconds = 0;
  int candidates = 0;
  std::string runner_up;
  double runner_up_seconds = 0;
  // Under the global search, where the greedy choice differs: its signature and its boxing in
  // and out (the neighbours as greedy chose them).
  std::string greedy_choice;
  double greedy_boxing_seconds = 0;
};

struct LogicalOp {
  OpId id = -1;
  std::string name;
  std::string type;
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;
  AttributeMap attributes;   // Complete: every schema attribute, defaults filled in.
  int line = 0;              // 1-based line in the job file; 0 for compiler-made ops.
  std::string gradient_of;   // For ops autodiff adds: the forward op's name.
  std::optional<int> stage;  // Pipeline stage the job asked for.
  std::string sbp_hint;      // The job's `sbp` attribute: output 0's nd-sbp, e.g. "S(0), B".
  int64_t period = 0;        // Pieces per firing; 0 until infer_periods.
  OpPlacement placement;     // Unset (stage -1) until placed.
  // Where the op goes among ops that are ready at the same time in TopologicalOrder (smaller
  // first): its id, unless a pass placed it next to the op it was made for.
  double sequence = 0;
};

// What AddOp needs; outputs must already exist (AddTensor) without a producer.
struct NewOp {
  std::string name;
  std::string type;
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;
  AttributeMap attributes;
  int line = 0;
  std::string gradient_of;
  std::optional<int> stage;
  std::string sbp_hint;
};

class LogicalGraph {
 public:
  // Adds a tensor without a producer. InvalidArgument when `name` is taken.
  StatusOr<TensorId> AddTensor(const std::string& name, TensorType type = {});

  // Adds an op and links its tensors. InvalidArgument when the name is taken or an output
  // already has a producer. CHECKs that every tensor id exists.
  StatusOr<OpId> AddOp(NewOp op);

  // Makes op `op` read `tensor` at input `input_index` instead of what it read there, keeping
  // both tensors' consumer lists right. CHECKs the ids and index.
  void ReplaceInput(OpId op, int input_index, TensorId tensor);

  // A name not yet used by any tensor (for TensorName) or op (for OpName): `base`, else
  // `base_2`, `base_3`, ...
  std::string UniqueTensorName(const std::string& base) const;
  std::string UniqueOpName(const std::string& base) const;

  const LogicalOp& op(OpId id) const;
  LogicalOp& mutable_op(OpId id);
  const LogicalTensor& tensor(TensorId id) const;
  LogicalTensor& mutable_tensor(TensorId id);

  int op_count() const { return static_cast<int>(ops_.size()); }
  int tensor_count() const { return static_cast<int>(tensors_.size()); }
  // Iterators (unlike references) are invalidated by AddTensor and AddOp.
  const std::deque<LogicalOp>& ops() const { return ops_; }
  const std::deque<LogicalTensor>& tensors() const { return tensors_; }

  std::optional<OpId> FindOp(const std::string& name) const;
  std::optional<TensorId> FindTensor(const std::string& name) const;

  // Ops such that every producer comes before its consumers; among ready ops the smallest
  // sequence (then id) first, so the order is stable and reads in program order. InvalidArgument
  // naming the ops of one cycle when there is one: "ops form a cycle: 'a' -> 'b' -> 'a'".
  // `first_on_cycle` receives the first op of that cycle when non-null.
  StatusOr<std::vector<OpId>> TopologicalOrder(OpId* first_on_cycle = nullptr) const;

  // Checks the structural invariants: ids equal indices, names map to the right ids, producer
  // and consumer links agree both ways, every tensor has a producer, no cycles. Internal on
  // the first broken one.
  Status Verify() const;

  // Counts the calls that may change the graph (AddTensor, AddOp, ReplaceInput, mutable_op,
  // mutable_tensor), so a caller can skip re-checking a graph nothing was asked to change
  // (Compilation::Verify after every pass). A mutable access counts whether or not it changed
  // anything: the count is conservative, never stale.
  int64_t version() const { return version_; }

 private:
  std::vector<OpId> FindCycle(const std::vector<int>& pending_inputs) const;

  std::deque<LogicalOp> ops_;
  std::deque<LogicalTensor> tensors_;
  std::map<std::string, OpId> op_by_name_;
  std::map<std::string, TensorId> tensor_by_name_;
  int64_t version_ = 0;
};

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_IR_LOGICAL_GRAPH_H_
