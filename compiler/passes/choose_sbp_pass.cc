// choose_sbp: the device mesh of every op and the nd-sbp of each of its inputs and outputs
// (docs/PARALLELISM.md, "Sbp").
//
// Ops run on their stage's mesh, except sinks, which read a B value on the first device of
// their stage. Sources are (S(0), B). For every other op, in topological order, each candidate
// nd signature (one of the op's 1D signatures per mesh axis of extent > 1, with every split
// even) is weighed by compute seconds per piece on the mesh plus the seconds per piece of the
// boxing its inputs need (placement::PlanBoxing: bandwidth and per-step latency); the cheapest
// wins, first in enumeration order on ties. A variable adopts the layout its first reader
// chose for it, which then costs that reader no boxing. That layout is replicated (B) on the dp
// axis, which is what data parallelism means (each replica holds every parameter; gradients
// come out partial there and the update's need for B inserts their all-reduce); on the tp axis
// it is free but never partial and splits at most one tensor axis, and a replicated one is
// charged the per-step all-reduce of its gradient over the tp group, so large weights tend to
// be split across it (tensor parallelism). Update ops take their variable's layout for both inputs.
// An `sbp` hint on a job op fixes its first output's nd-sbp: "S(0), B" names one sbp per mesh axis
// (dp, tp); a single entry names the one mesh axis of extent > 1.
#include <algorithm>
#include <limits>
#include <map>

#include "compiler/ops/sbp_signatures.h"
#include "compiler/passes/passes.h"
#include "compiler/physical/op_cost.h"

namespace softwire {
namespace compiler {
namespace {

using placement::NdSbp;
using placement::Sbp;

// 16 bits naming an nd-sbp, for memo tables.
int Key(const NdSbp& sbp) {
  int key = 0;
  for (const Sbp& s : sbp) key = key * 256 + static_cast<int>(s.kind) * 64 + s.axis;
  return key;
}

std::string SignatureText(const std::vector<NdSbp>& inputs, const std::vector<NdSbp>& outputs) {
  std::string text;
  for (size_t i = 0; i < inputs.size(); ++i) {
    text += (i ? " x " : "") + placement::NdSbpToString(inputs[i]);
  }
  text += inputs.empty() ? "->" : " ->";
  for (const NdSbp& output : outputs) text += " " + placement::NdSbpToString(output);
  return text;
}

struct Candidate {
  std::vector<NdSbp> inputs;
  std::vector<NdSbp> outputs;
  double compute_seconds = 0;
  double boxing_seconds = 0;
  double total() const { return compute_seconds + boxing_seconds; }
};

class SbpChooser {
 public:
  explicit SbpChooser(Compilation& compilation)
      : compilation_(compilation), graph_(compilation.graph), cost_(*compilation.cluster) {}

  Status Run() {
    SOFTWIRE_ASSIGN_OR_RETURN(std::vector<OpId> order, graph_.TopologicalOrder());
    for (OpId id : order) SOFTWIRE_RETURN_IF_ERROR(Place(id));
    for (OpId id : order) {
      LogicalOp& op = graph_.mutable_op(id);
      if (op.placement.mesh >= 0) continue;
      CHECK(op.type == "variable") << "op '" << op.name << "' was not placed";
      op.placement.mesh = op.placement.stage;  // A variable nobody reads.
      op.placement.outputs = {placement::AllBroadcast()};
    }
    compilation_.placed = true;
    return Status::Ok();
  }

 private:
  const placement::DeviceMesh& MeshOf(const LogicalOp& op) const {
    return compilation_.meshes[op.placement.mesh];
  }

  int SingleDeviceMesh(int device) {
    auto found = single_device_mesh_.find(device);
    if (found != single_device_mesh_.end()) return found->second;
    placement::DeviceMesh mesh;
    mesh.devices = {device};
    mesh.shape = {1, 1};
    compilation_.meshes.push_back(std::move(mesh));
    const int index = static_cast<int>(compilation_.meshes.size()) - 1;
    single_device_mesh_[device] = index;
    return index;
  }

  // The layout the producer of input `index` of `op` gives it.
  std::pair<const placement::DeviceMesh*, NdSbp> Produced(const LogicalOp& op, int index) const {
    const LogicalTensor& tensor = graph_.tensor(op.inputs[index]);
    const LogicalOp& producer = graph_.op(tensor.producer);
    return {&MeshOf(producer), producer.placement.outputs[tensor.producer_output]};
  }

  bool IsUnplacedVariable(TensorId tensor) const {
    const LogicalOp& producer = graph_.op(graph_.tensor(tensor).producer);
    return producer.type == "variable" && producer.placement.mesh < 0;
  }

  Status Place(OpId id) {
    LogicalOp& op = graph_.mutable_op(id);
    if (op.type == "variable") return Status::Ok();  // Its first reader places it.
    if (op.type == "source") return PlaceSource(op);
    if (op.type == "sink") {
      op.placement.mesh = SingleDeviceMesh(compilation_.meshes[op.placement.stage].devices[0]);
      op.placement.inputs = {placement::AllBroadcast()};
      return Status::Ok();
    }
    if (compilation_.registry().Find(op.type)->actor_kind == proto::ACTOR_KIND_UPDATE) {
      const LogicalOp& variable = graph_.op(graph_.tensor(op.inputs[1]).producer);
      CHECK_GE(variable.placement.mesh, 0)
          << "variable '" << variable.name << "' is updated before anything reads it";
      op.placement.mesh = variable.placement.mesh;
      op.placement.inputs = {variable.placement.outputs[0], variable.placement.outputs[0]};
      return Status::Ok();
    }
    return Choose(op);
  }

  Status PlaceSource(LogicalOp& op) {
    op.placement.mesh = op.placement.stage;
    const placement::DeviceMesh& mesh = MeshOf(op);
    NdSbp sbp = placement::Normalized({Sbp::Split(0), Sbp::Broadcast()}, mesh.shape);
    op.placement.outputs.assign(op.outputs.size(), sbp);
    return Status::Ok();
  }

  // The nd-sbp an `sbp` hint names for output 0, normalized to the mesh.
  StatusOr<NdSbp> ParseHint(const LogicalOp& op, const placement::DeviceMesh& mesh) const {
    std::vector<std::string> entries;
    std::string current;
    for (char c : op.sbp_hint + ",") {
      if (c == ',') {
        entries.push_back(current);
        current.clear();
      } else {
        current += c;
      }
    }
    NdSbp hint = placement::AllBroadcast();
    std::vector<int> active;
    for (int k = 0; k < placement::kMeshAxes; ++k) {
      if (mesh.shape[k] > 1) active.push_back(k);
    }
    if (entries.size() == 2) {
      for (int k = 0; k < 2; ++k) {
        StatusOr<Sbp> sbp = placement::ParseSbp(entries[k]);
        if (!sbp.ok())
          return compilation_.OpError(op.id, "attribute 'sbp': " + sbp.status().message());
        hint[k] = *sbp;
      }
    } else if (entries.size() == 1 && active.size() <= 1) {
      StatusOr<Sbp> sbp = placement::ParseSbp(entries[0]);
      if (!sbp.ok())
        return compilation_.OpError(op.id, "attribute 'sbp': " + sbp.status().message());
      if (!active.empty()) hint[active[0]] = *sbp;
    } else {
      return compilation_.OpError(op.id, "attribute 'sbp' \"" + op.sbp_hint +
                                             "\" must name one sbp per mesh axis (dp, tp), e.g. "
                                             "\"S(0), B\"");
    }
    return placement::Normalized(hint, mesh.shape);
  }

  double BoxingSeconds(const LogicalOp& op, int index, const placement::DeviceMesh& mesh,
                       const NdSbp& wanted) {
    std::vector<std::pair<int, double>>& memo = boxing_memo_[index];
    const int key = Key(wanted);
    for (const auto& [known, seconds] : memo) {
      if (known == key) return seconds;
    }
    const LogicalTensor& tensor = graph_.tensor(op.inputs[index]);
    auto [from_mesh, from] = Produced(op, index);
    placement::BoxingRequest request{from_mesh,
                                     from,
                                     &mesh,
                                     wanted,
                                     &tensor.type.shape.dims(),
                                     static_cast<int64_t>(SizeOf(tensor.type.dtype))};
    double seconds =
        placement::PlanBoxing(cost_, request).seconds / static_cast<double>(tensor.period);
    memo.emplace_back(key, seconds);
    return seconds;
  }

  // Per piece: the all-reduce over the tp axis of the gradient of a trainable variable
  // replicated there, once per step (its dp all-reduce is paid whatever the layout).
  double GradientSyncSeconds(TensorId variable, const placement::DeviceMesh& mesh,
                             const NdSbp& sbp) {
    if (compilation_.variable_gradients.count(variable) == 0) return 0;
    const TensorType& type = graph_.tensor(variable).type;
    const double bytes = static_cast<double>(LocalType(type, sbp, mesh.shape).NumBytes());
    double seconds = 0;
    for (int k = 1; k < placement::kMeshAxes; ++k) {
      if (mesh.shape[k] == 1 || !sbp[k].is_broadcast()) continue;
      std::vector<int> ring;
      for (int i = 0; i < mesh.shape[k]; ++i) {
        placement::MeshCoordinate at{0, 0};
        at[k] = i;
        ring.push_back(mesh.devices[mesh.Linear(at)]);
      }
      seconds += cost_.RingAllReduceSeconds(ring, bytes);
    }
    return seconds / static_cast<double>(compilation_.schedule.pieces_per_step);
  }

  static bool FitsAVariable(const NdSbp& sbp, const placement::DeviceMesh& mesh) {
    return (mesh.shape[0] == 1 || sbp[0].is_broadcast()) && !placement::HasPartial(sbp) &&
           placement::SplitAxes(sbp).size() <= 1;
  }

  // Whether `candidate` is allowed: every split even, variables laid out as a variable may be.
  bool Allowed(const LogicalOp& op, const placement::DeviceMesh& mesh,
               const Candidate& candidate) const {
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const TensorType& type = graph_.tensor(op.inputs[i]).type;
      if (!placement::SplitsEvenly(type.shape.dims(), candidate.inputs[i], mesh.shape)) {
        return false;
      }
      if (IsUnplacedVariable(op.inputs[i]) && !FitsAVariable(candidate.inputs[i], mesh)) {
        return false;
      }
    }
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      const TensorType& type = graph_.tensor(op.outputs[i]).type;
      if (!placement::SplitsEvenly(type.shape.dims(), candidate.outputs[i], mesh.shape)) {
        return false;
      }
    }
    return true;
  }

  // Seconds per piece of the boxing `candidate`'s inputs need (memoized per input and layout).
  double InputBoxingSeconds(const LogicalOp& op, const placement::DeviceMesh& mesh,
                            const Candidate& candidate) {
    double seconds = 0;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      seconds += IsUnplacedVariable(op.inputs[i])
                     ? GradientSyncSeconds(op.inputs[i], mesh, candidate.inputs[i])
                     : BoxingSeconds(op, static_cast<int>(i), mesh, candidate.inputs[i]);
    }
    return seconds;
  }

  double ComputeSeconds(const LogicalOp& op, const OpDefinition& definition,
                        const placement::DeviceMesh& mesh, const Candidate& candidate) {
    local_inputs_.resize(op.inputs.size());
    local_outputs_.resize(op.outputs.size());
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      local_inputs_[i] =
          LocalType(graph_.tensor(op.inputs[i]).type, candidate.inputs[i], mesh.shape);
    }
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      local_outputs_[i] =
          LocalType(graph_.tensor(op.outputs[i]).type, candidate.outputs[i], mesh.shape);
    }
    return OpSeconds(definition, local_inputs_, local_outputs_, op.attributes, cost_,
                     mesh.devices[0]) /
           static_cast<double>(op.period);
  }

  std::vector<Candidate> Enumerate(const LogicalOp& op, const placement::DeviceMesh& mesh) {
    const OpDefinition& definition = *compilation_.registry().Find(op.type);
    std::vector<TensorType> inputs;
    std::vector<TensorType> outputs;
    for (TensorId input : op.inputs) inputs.push_back(graph_.tensor(input).type);
    for (TensorId output : op.outputs) outputs.push_back(graph_.tensor(output).type);
    const std::vector<SbpSignature> all =
        SbpSignaturesOf(definition, {inputs, outputs, op.attributes});
    const std::vector<SbpSignature> broadcast_only(all.begin(), all.begin() + 1);
    const std::vector<SbpSignature>& first = mesh.shape[0] > 1 ? all : broadcast_only;
    const std::vector<SbpSignature>& second = mesh.shape[1] > 1 ? all : broadcast_only;
    std::vector<Candidate> candidates;
    candidates.reserve(first.size() * second.size());
    for (const SbpSignature& dp : first) {
      for (const SbpSignature& tp : second) {
        Candidate candidate;
        for (size_t i = 0; i < op.inputs.size(); ++i) {
          candidate.inputs.push_back({dp.inputs[i], tp.inputs[i]});
        }
        for (size_t i = 0; i < op.outputs.size(); ++i) {
          candidate.outputs.push_back({dp.outputs[i], tp.outputs[i]});
        }
        candidates.push_back(std::move(candidate));
      }
    }
    return candidates;
  }

  Status Choose(LogicalOp& op) {
    op.placement.mesh = op.placement.stage;
    const placement::DeviceMesh& mesh = MeshOf(op);
    boxing_memo_.assign(op.inputs.size(), {});
    std::optional<NdSbp> hint;
    if (!op.sbp_hint.empty()) {
      SOFTWIRE_ASSIGN_OR_RETURN(hint, ParseHint(op, mesh));
      if (op.outputs.empty()) return compilation_.OpError(op.id, "attribute 'sbp' needs an output");
    }
    const double infinity = std::numeric_limits<double>::infinity();
    const OpDefinition& definition = *compilation_.registry().Find(op.type);
    Candidate best;
    Candidate runner_up;
    double best_total = infinity;
    double runner_up_total = infinity;
    int weighed = 0;
    std::vector<std::string> allowed_outputs;
    for (Candidate& candidate : Enumerate(op, mesh)) {
      if (!Allowed(op, mesh, candidate)) continue;
      if (hint.has_value()) {
        std::string text = placement::NdSbpToString(candidate.outputs[0]);
        if (std::find(allowed_outputs.begin(), allowed_outputs.end(), text) ==
            allowed_outputs.end()) {
          allowed_outputs.push_back(text);
        }
        if (placement::Normalized(candidate.outputs[0], mesh.shape) != *hint) continue;
      }
      ++weighed;
      // Boxing is memoized and cheap; a candidate whose boxing alone cannot beat the runner-up
      // is not worth its compute estimate.
      candidate.boxing_seconds = InputBoxingSeconds(op, mesh, candidate);
      if (candidate.boxing_seconds >= runner_up_total) continue;
      candidate.compute_seconds = ComputeSeconds(op, definition, mesh, candidate);
      const double total = candidate.total();
      if (total < best_total) {
        runner_up_total = best_total;
        runner_up = std::move(best);
        best_total = total;
        best = std::move(candidate);
      } else if (total < runner_up_total) {
        runner_up_total = total;
        runner_up = std::move(candidate);
      }
    }
    if (best_total == infinity) {
      std::string choices;
      for (const std::string& text : allowed_outputs)
        choices += (choices.empty() ? "" : ", ") + text;
      return compilation_.OpError(op.id, "attribute 'sbp' \"" + op.sbp_hint +
                                             "\" is not a layout this op can produce on mesh " +
                                             mesh.ToString() + " (it can produce " + choices + ")");
    }
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (!IsUnplacedVariable(op.inputs[i])) continue;
      LogicalOp& variable = graph_.mutable_op(graph_.tensor(op.inputs[i]).producer);
      CHECK_EQ(variable.placement.stage, op.placement.stage) << variable.name;
      variable.placement.mesh = op.placement.mesh;
      variable.placement.outputs = {placement::Normalized(best.inputs[i], mesh.shape)};
    }
    for (NdSbp& sbp : best.inputs) sbp = placement::Normalized(sbp, mesh.shape);
    for (NdSbp& sbp : best.outputs) sbp = placement::Normalized(sbp, mesh.shape);
    op.placement.inputs = std::move(best.inputs);
    op.placement.outputs = std::move(best.outputs);
    op.placement.compute_seconds = best.compute_seconds;
    op.placement.boxing_seconds = best.boxing_seconds;
    op.placement.candidates = weighed;
    op.placement.runner_up =
        runner_up_total == infinity ? "" : SignatureText(runner_up.inputs, runner_up.outputs);
    op.placement.runner_up_seconds = runner_up_total == infinity ? 0 : runner_up_total;
    return Status::Ok();
  }

  Compilation& compilation_;
  LogicalGraph& graph_;
  placement::CostModel cost_;
  std::map<int, int> single_device_mesh_;
  std::vector<std::vector<std::pair<int, double>>> boxing_memo_;  // Per input of the current op.
  std::vector<TensorType> local_inputs_;                          // Reused by ComputeSeconds.
  std::vector<TensorType> local_outputs_;
};

}  // namespace

Status ChooseSbpPass(Compilation& compilation) {
  return SbpChooser(compilation).Run();
}

}  // namespace compiler
}  // namespace softwire
