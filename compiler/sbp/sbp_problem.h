// SbpProblem: the choice choose_sbp makes, as data the solvers (sbp_solvers.h) work on: every
// op's mesh and the nd-sbp candidates it may take, with their compute seconds, and the seconds
// of any boxing between two layouts of a tensor (docs/PARALLELISM.md, "Sbp").
//
// Kinds of ops:
//   choice    a job, backward or helper op: one of `candidates` (its 1D signatures per mesh
//             axis of extent > 1, every split even, an `sbp` hint's output and the caller's
//             filter respected), on its stage's mesh
//   variable  one of the layouts a variable may take on its stage's mesh: B on dp, B or one
//             tensor axis split on tp; its candidates' seconds are the per-step all-reduce of
//             its gradient over tp where it is replicated there, plus its update's compute
//   update    no choice: both inputs in its variable's layout
//   source    (S(0), B), fixed;   sink: B on the first device of its stage, fixed
//
// An Assignment gives each op the index of its candidate (0 for fixed ops, ignored for updates).
// Evaluate sums, per piece: every chosen candidate's seconds and every input's boxing from its
// producer's layout (PlanBoxing, per-step tensors divided by the pieces of a step), a boxing's
// seconds including the firings of the actors it adds on its busiest device
// (placement::kActorFiringSeconds each; compiler/physical/boxing_actor_count.h). That total is
// what the solvers minimize: the step's estimated time as a sum, without overlap.
//
// Costs are memoized: candidates and their compute per (stage, op type, types, attributes),
// boxing per (tensor shape, meshes, layouts). One problem serves one thread.
#ifndef SOFTWIRE_COMPILER_SBP_SBP_PROBLEM_H_
#define SOFTWIRE_COMPILER_SBP_SBP_PROBLEM_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "compiler/compilation.h"
#include "placement/cost_model.h"
#include "placement/sbp.h"

namespace softwire {
namespace compiler {

enum class SbpOpKind { kChoice, kVariable, kUpdate, kSource, kSink };

struct SbpCandidate {
  std::vector<placement::NdSbp> inputs;   // Normalized to the op's mesh.
  std::vector<placement::NdSbp> outputs;  // Normalized to the op's mesh.
  double compute_seconds = 0;        // Per piece. A variable: gradient sync + its update's compute.
  double gradient_sync_seconds = 0;  // Variables only: what the greedy choice charges.
};

// Which candidates a choice op may take, for passes that run the search under constraints;
// an empty function allows all.
using SbpFilter = std::function<bool(const LogicalOp& op, const SbpCandidate& candidate)>;

struct SbpOpEntry {
  SbpOpKind kind = SbpOpKind::kChoice;
  int mesh = -1;  // Index in Compilation::meshes.
  // Shared between ops of the same stage, type, types and attributes.
  std::shared_ptr<const std::vector<SbpCandidate>> candidates;
  OpId variable = -1;  // Updates: the variable they update.
  OpId update = -1;    // Variables: their update op, or -1.
};

using SbpAssignment = std::vector<int>;  // Per op id: index into its candidates.

// A variable's layout sharded over dp, as budget measure 3 lays out the variables optimizer
// updates write (shard_updates_pass.cc): `layout` with S(k) on the dp axis, k the first tensor
// axis dp divides evenly, when `layout` is B on dp and split by no tp axis and dp > 1; else
// `layout` unchanged.
placement::NdSbp ShardedOverDataParallel(const placement::NdSbp& layout,
                                         const LogicalTensor& variable,
                                         const placement::DeviceMesh& mesh);

class SbpProblem {
 public:
  // Ops must be staged (partition_stages). Appends one-device meshes for sinks to
  // `compilation.meshes` where they are missing. InvalidArgument naming the op for an `sbp`
  // hint that is malformed or names a layout the op cannot produce, or when `filter` leaves an
  // op no candidate.
  static StatusOr<std::unique_ptr<SbpProblem>> Build(Compilation& compilation,
                                                     const SbpFilter& filter);

  const LogicalGraph& graph() const { return graph_; }
  const Compilation& compilation() const { return compilation_; }
  const std::vector<OpId>& order() const { return order_; }  // Topological.
  const SbpOpEntry& entry(OpId op) const { return entries_[op]; }
  const std::vector<SbpCandidate>& candidates(OpId op) const { return *entries_[op].candidates; }

  // The layout `op` reads input `index` in / writes output `index` in under `assignment`.
  const placement::NdSbp& InputLayout(const SbpAssignment& assignment, OpId op, int index) const;
  const placement::NdSbp& OutputLayout(const SbpAssignment& assignment, OpId op, int index) const;
  // The mesh and layout input `index` of `op` arrives in from its producer.
  int ProducerMesh(OpId op, int index) const;
  const placement::NdSbp& Produced(const SbpAssignment& assignment, OpId op, int index) const;

  // Seconds per piece to turn `tensor` from (from_mesh, from) into (to_mesh, to). With
  // `gradient_sync` (a gradient only updates read), as insert_boxing plans it for a gradient
  // bucket (placement::PlanGradientSync) where that applies.
  double Boxing(TensorId tensor, int from_mesh, const placement::NdSbp& from, int to_mesh,
                const placement::NdSbp& to, bool gradient_sync = false);
  // Seconds per piece of the boxing input `index` of `op` needs under `assignment`.
  double InputBoxing(const SbpAssignment& assignment, OpId op, int index);
  // Seconds per piece of `op` under `assignment`: its candidate's and its inputs' boxing.
  double OpSeconds(const SbpAssignment& assignment, OpId op);
  // The sum of OpSeconds over every op.
  double Evaluate(const SbpAssignment& assignment);

 private:
  explicit SbpProblem(Compilation& compilation);
  Status Prepare(const SbpFilter& filter);
  StatusOr<std::shared_ptr<const std::vector<SbpCandidate>>> ChoiceCandidates(
      const LogicalOp& op, const SbpFilter& filter);
  std::shared_ptr<const std::vector<SbpCandidate>> VariableCandidates(const LogicalOp& variable,
                                                                      OpId update);
  StatusOr<placement::NdSbp> ParseHint(const LogicalOp& op,
                                       const placement::DeviceMesh& mesh) const;
  double GradientSyncSeconds(TensorId variable, const placement::DeviceMesh& mesh,
                             const placement::NdSbp& sbp) const;
  int SingleDeviceMesh(int device);
  int ShapeClass(TensorId tensor);
  bool OnlyUpdatesRead(TensorId tensor) const;
  // Whether the variable `update` (an op id, or -1) writes is laid out sharded over dp: the
  // budget driver asked for sharded updates, the compilation uses the global search, and
  // `update` is an sgd or adam update.
  bool ShardsUpdate(OpId update) const;

  struct BoxingKey {
    uint64_t high = 0;
    uint64_t low = 0;
    bool operator==(const BoxingKey& other) const { return high == other.high && low == other.low; }
  };
  struct BoxingKeyHash {
    size_t operator()(const BoxingKey& key) const {
      return std::hash<uint64_t>()(key.high * 0x9E3779B97F4A7C15ull ^ key.low);
    }
  };

  Compilation& compilation_;
  const LogicalGraph& graph_;
  placement::CostModel cost_;
  std::vector<OpId> order_;
  std::vector<SbpOpEntry> entries_;
  std::map<std::string, std::shared_ptr<const std::vector<SbpCandidate>>> candidate_memo_;
  std::map<std::pair<std::vector<int64_t>, int64_t>, int> shape_classes_;
  std::vector<int> tensor_class_;  // Per tensor; -1 until asked.
  std::unordered_map<BoxingKey, double, BoxingKeyHash> boxing_memo_;
};

// 16 bits naming an nd-sbp, for memo tables.
int SbpKey(const placement::NdSbp& sbp);

// "(S(0), B) x (B, S(1)) -> (S(0), S(1))".
std::string CandidateText(const SbpCandidate& candidate);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_SBP_SBP_PROBLEM_H_
