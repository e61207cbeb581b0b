// insert_boxing: for every op input whose producer lays the tensor out differently from how the
// op reads it (another mesh, or another nd-sbp), the boxing that converts it
// (docs/PARALLELISM.md, "Boxing"), planned by placement::PlanBoxing. Consumers that want a
// tensor the same way share one edge. expand_physical builds the edges' actors.
//
// Gradient buckets: the per-step all-reduces that only update ops read (the data-parallel
// gradient sync) are fused, per mesh and mesh axis, into buckets of up to 32 MiB per device, in
// the order the gradients complete (backward order), as DDP and Horovod do: one ring per
// bucket instead of one per weight moves the same bytes with far fewer messages and actors.
// A bucket whose mesh spans nodes closes at 4 MiB instead, so the exchange of the last layers'
// gradients starts while the first layers' backward still runs (docs/DATA_PLANE.md,
// "Collectives across nodes"); within a node the transfers are cheap and the larger bucket wins.
#include <algorithm>
#include <map>
#include <tuple>

#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

int Key(const placement::NdSbp& sbp) {
  int key = 0;
  for (const placement::Sbp& s : sbp) key = key * 256 + static_cast<int>(s.kind) * 64 + s.axis;
  return key;
}

// A per-step float32 value only update ops read: a gradient on its way to its update.
bool GradientOnlyReadByUpdates(const Compilation& compilation, const LogicalTensor& tensor) {
  if (!compilation.schedule.training || tensor.type.dtype != DType::kFloat32 ||
      tensor.period != compilation.schedule.pieces_per_step || tensor.consumers.empty()) {
    return false;
  }
  for (const TensorUse& use : tensor.consumers) {
    const OpDefinition& definition =
        *compilation.registry().Find(compilation.graph.op(use.op).type);
    if (definition.actor_kind != proto::ACTOR_KIND_UPDATE) return false;
  }
  return true;
}

constexpr int64_t kBucketBytes = int64_t{32} << 20;
constexpr int64_t kCrossNodeBucketBytes = int64_t{4} << 20;

// Whether the mesh's devices lie on more than one node.
bool SpansNodes(const Compilation& compilation, const placement::DeviceMesh& mesh) {
  for (int device : mesh.devices) {
    if (compilation.devices[device].node != compilation.devices[mesh.devices[0]].node) return true;
  }
  return false;
}
constexpr size_t kBucketTensors = 256;

int AllReduces(const BoxingEdge& edge) {
  int count = 0;
  for (const placement::BoxingStep& step : edge.plan.steps) {
    count += step.method == placement::BoxingMethod::kAllReduce ? 1 : 0;
  }
  return count;
}

// The bucket axis of an edge's all-reduce: its mesh axis, or the whole mesh when both steps
// all-reduce ((P, P) -> (B, B)).
int BucketAxis(const BoxingEdge& edge) {
  if (AllReduces(edge) == 2) return GradientBucket::kWholeMesh;
  for (const placement::BoxingStep& step : edge.plan.steps) {
    if (step.method == placement::BoxingMethod::kAllReduce) return step.mesh_axis;
  }
  return -1;
}

// Per-step float32 boxing with one all-reduce (or two in a row: the whole mesh) that only
// updates read. Its other steps run per tensor, before packing or after unpacking.
bool Fusible(const Compilation& compilation, const BoxingEdge& edge,
             const std::vector<OpId>& consumers) {
  const LogicalTensor& tensor = compilation.graph.tensor(edge.tensor);
  const int all_reduces = AllReduces(edge);
  bool adjacent = true;
  for (size_t k = 1; k < edge.plan.steps.size(); ++k) {
    if (edge.plan.steps[k].method == placement::BoxingMethod::kAllReduce &&
        edge.plan.steps[k - 1].method == placement::BoxingMethod::kAllReduce) {
      adjacent = true;
    } else if (edge.plan.steps[k].method == placement::BoxingMethod::kAllReduce &&
               all_reduces == 2) {
      adjacent = false;
    }
  }
  if (edge.plan.general || all_reduces == 0 || !adjacent || tensor.type.dtype != DType::kFloat32 ||
      !compilation.schedule.training || tensor.period != compilation.schedule.pieces_per_step) {
    return false;
  }
  for (OpId consumer : consumers) {
    const OpDefinition& definition =
        *compilation.registry().Find(compilation.graph.op(consumer).type);
    if (definition.actor_kind != proto::ACTOR_KIND_UPDATE) return false;
  }
  return true;
}

// Where a gradient completes in the step: its per-piece producer's place in the topological
// order (an accumulate completes with the last piece of the op it sums).
int CompletionPosition(const LogicalGraph& graph, const std::vector<int>& position,
                       TensorId tensor) {
  const LogicalOp& producer = graph.op(graph.tensor(tensor).producer);
  if (producer.type == "accumulate") {
    return position[graph.tensor(producer.inputs[0]).producer];
  }
  return position[producer.id];
}

void FormBuckets(Compilation& compilation, const std::vector<int>& position,
                 const std::vector<std::vector<OpId>>& consumers) {
  std::vector<int> fusible;
  for (size_t e = 0; e < compilation.boxing.size(); ++e) {
    if (Fusible(compilation, compilation.boxing[e], consumers[e])) {
      fusible.push_back(static_cast<int>(e));
    }
  }
  const LogicalGraph& graph = compilation.graph;
  std::stable_sort(fusible.begin(), fusible.end(), [&](int a, int b) {
    return CompletionPosition(graph, position, compilation.boxing[a].tensor) <
           CompletionPosition(graph, position, compilation.boxing[b].tensor);
  });
  std::map<std::pair<int, int>, int> open;  // (mesh, axis) -> bucket being filled.
  for (int e : fusible) {
    BoxingEdge& edge = compilation.boxing[e];
    const placement::DeviceMesh& mesh = compilation.meshes[edge.from_mesh];
    const int axis = BucketAxis(edge);
    // The packed bytes: the layout right before the all-reduce (the larger of the two ends).
    const int64_t bytes =
        4 * std::max(Shape(placement::LocalDims(graph.tensor(edge.tensor).type.shape.dims(),
                                                edge.to, mesh.shape))
                         .NumElements(),
                     Shape(placement::LocalDims(graph.tensor(edge.tensor).type.shape.dims(),
                                                edge.from, mesh.shape))
                         .NumElements());
    auto key = std::make_pair(edge.from_mesh, axis);
    auto found = open.find(key);
    const int64_t cap = SpansNodes(compilation, mesh) ? kCrossNodeBucketBytes : kBucketBytes;
    if (found == open.end() || compilation.gradient_buckets[found->second].bytes + bytes > cap ||
        compilation.gradient_buckets[found->second].edges.size() >= kBucketTensors) {
      GradientBucket bucket;
      bucket.mesh = edge.from_mesh;
      bucket.mesh_axis = axis;
      compilation.gradient_buckets.push_back(bucket);
      open[key] = static_cast<int>(compilation.gradient_buckets.size()) - 1;
      found = open.find(key);
    }
    GradientBucket& bucket = compilation.gradient_buckets[found->second];
    bucket.edges.push_back(e);
    bucket.bytes += bytes;
    edge.bucket = found->second;
  }
}

}  // namespace

Status InsertBoxingPass(Compilation& compilation) {
  const LogicalGraph& graph = compilation.graph;
  const placement::CostModel cost(*compilation.cluster);
  SOFTWIRE_ASSIGN_OR_RETURN(std::vector<OpId> order, graph.TopologicalOrder());
  compilation.boxing.clear();
  compilation.gradient_buckets.clear();
  compilation.input_boxing.assign(graph.op_count(), {});
  std::vector<int> position(graph.op_count(), 0);
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int>(i);
  std::vector<std::vector<OpId>> consumers;              // Per edge.
  std::map<std::tuple<TensorId, int, int>, int> shared;  // (tensor, mesh, sbp) -> edge.
  for (OpId id : order) {
    const LogicalOp& op = graph.op(id);
    std::vector<int>& edges = compilation.input_boxing[id];
    edges.assign(op.inputs.size(), -1);
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const LogicalTensor& tensor = graph.tensor(op.inputs[i]);
      const LogicalOp& producer = graph.op(tensor.producer);
      const placement::NdSbp& from = producer.placement.outputs[tensor.producer_output];
      const placement::NdSbp& to = op.placement.inputs[i];
      auto key = std::make_tuple(tensor.id, op.placement.mesh, Key(to));
      auto found = shared.find(key);
      if (found != shared.end()) {
        edges[i] = found->second;
        consumers[found->second].push_back(id);
        continue;
      }
      placement::BoxingRequest request{&compilation.meshes[producer.placement.mesh],
                                       from,
                                       &compilation.meshes[op.placement.mesh],
                                       to,
                                       &tensor.type.shape.dims(),
                                       static_cast<int64_t>(SizeOf(tensor.type.dtype))};
      // A gradient on its way to its update is reshaped for a bucket (pad, all-reduce, slice)
      // when that applies; everything else takes the usual plan.
      placement::BoxingPlan plan;
      bool planned = false;
      if (GradientOnlyReadByUpdates(compilation, tensor)) {
        plan = placement::PlanGradientSync(cost, request);
        planned = !plan.general;
      }
      if (!planned) plan = placement::PlanBoxing(cost, request);
      if (!plan.needed) continue;
      BoxingEdge edge;
      edge.tensor = tensor.id;
      edge.from_mesh = producer.placement.mesh;
      edge.from = from;
      edge.to_mesh = op.placement.mesh;
      edge.to = to;
      edge.stage = op.placement.stage;
      edge.plan = std::move(plan);
      compilation.boxing.push_back(std::move(edge));
      consumers.push_back({id});
      edges[i] = static_cast<int>(compilation.boxing.size()) - 1;
      shared[key] = edges[i];
    }
  }
  FormBuckets(compilation, position, consumers);
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
