#include "compiler/physical/boxing_builder.h"

#include <algorithm>
#include <numeric>

namespace softwire {
namespace compiler {

using placement::BoxingMethod;

namespace {

const char* const kAxisLabels[placement::kMeshAxes] = {"dp", "tp"};

std::vector<int64_t> Offsets(int rank, int axis, int64_t offset) {
  std::vector<int64_t> offsets(rank, 0);
  offsets[axis] = offset;
  return offsets;
}

}  // namespace

// The devices of one collective group, by ring position, with the register each holds and the
// whole value the group shares (its local dims when the stepped mesh axis is broadcast).
struct BoxingBuilder::Group {
  std::vector<int> devices;
  std::vector<RegisterId> inputs;
  std::vector<RegisterId> outputs;
  std::vector<int64_t> whole;
  DType dtype = DType::kFloat32;
  std::string label;  // "<name>.<method>[.<axis>]".

  int size() const { return static_cast<int>(devices.size()); }
  // Extent of `axis` of part `part` when the whole is cut into size() parts there.
  int64_t PartBegin(int axis, int part) const { return part * whole[axis] / size(); }
  int64_t PartEnd(int axis, int part) const { return (part + 1) * whole[axis] / size(); }
};

int RingSubChunks(int64_t chunk_bytes) {
  // A 1 MiB step takes ~20 us on a 50 GB/s link against its ~2 us latency: smaller
  // sub-chunks would mostly add latency and actors.
  constexpr int64_t kSubChunkBytes = 1 << 20;
  return static_cast<int>(std::clamp<int64_t>(chunk_bytes / kSubChunkBytes, 1, 4));
}

std::string BoxingBuilder::At(const std::string& name, int device) const {
  return name + "@" + std::to_string(device);
}

std::vector<RegisterId> BoxingBuilder::AddTask(const EdgeContext& context, const std::string& label,
                                               proto::ActorKind kind, int device,
                                               const std::string& op_type, AttributeMap attributes,
                                               const std::vector<RegisterId>& inputs,
                                               const std::vector<TensorType>& outputs) {
  TaskDef task;
  task.name = At(label, device);
  task.kind = kind;
  task.device = device;
  task.queue = kind == proto::ACTOR_KIND_COPY ? 1 : 0;
  task.period = context.period;
  task.firings = compilation_.schedule.total_pieces() / context.period;
  task.op_type = op_type;
  task.attributes = std::move(attributes);
  task.logical_op = -1;
  task.stage = context.edge->stage;
  const TaskId id = tasks_.AddTask(std::move(task));
  for (RegisterId input : inputs) tasks_.AddReader(input, id, 0);
  std::vector<RegisterId> registers;
  for (size_t k = 0; k < outputs.size(); ++k) {
    TaskRegister reg;
    reg.name =
        outputs.size() == 1 ? At(label, device) : At(label + "." + std::to_string(k), device);
    reg.producer = id;
    reg.device = device;
    reg.type = outputs[k];
    reg.period = context.period;
    reg.logical_tensor = context.register_tensor;
    registers.push_back(tasks_.AddRegister(std::move(reg)));
  }
  return registers;
}

RegisterId BoxingBuilder::Copy(const EdgeContext& context, const std::string& name,
                               RegisterId input, int device) {
  return AddTask(context, name, proto::ACTOR_KIND_COPY, device, "copy", {}, {input},
                 {tasks_.register_at(input).type})[0];
}

RegisterId BoxingBuilder::Slice(const EdgeContext& context, const std::string& name,
                                RegisterId input, int device, const std::vector<int64_t>& begin,
                                const std::vector<int64_t>& end) {
  const TaskRegister& source = tasks_.register_at(input);
  std::vector<int64_t> dims;
  for (size_t axis = 0; axis < begin.size(); ++axis) dims.push_back(end[axis] - begin[axis]);
  AttributeMap attributes;
  attributes.Set("begin", begin);
  attributes.Set("end", end);
  // Across devices a copy actor slices as it copies.
  proto::ActorKind kind =
      source.device == device ? proto::ACTOR_KIND_BOXING : proto::ACTOR_KIND_COPY;
  return AddTask(context, name, kind, device, "slice", std::move(attributes), {input},
                 {TensorType{source.type.dtype, Shape(std::move(dims))}})[0];
}

RegisterId BoxingBuilder::Add(const EdgeContext& context, const std::string& name, RegisterId a,
                              RegisterId b) {
  const TaskRegister& left = tasks_.register_at(a);
  return AddTask(context, name, proto::ACTOR_KIND_BOXING, left.device, "add", {}, {a, b},
                 {left.type})[0];
}

RegisterId BoxingBuilder::Assemble(const EdgeContext& context, const std::string& name, int device,
                                   const std::vector<RegisterId>& inputs,
                                   const std::vector<int64_t>& shape,
                                   const std::vector<int64_t>& offsets) {
  AttributeMap attributes;
  attributes.Set("shape", shape);
  attributes.Set("offsets", offsets);
  const DType dtype = tasks_.register_at(inputs[0]).type.dtype;
  return AddTask(context, name, proto::ACTOR_KIND_BOXING, device, "assemble", std::move(attributes),
                 inputs, {TensorType{dtype, Shape(shape)}})[0];
}

RegisterId BoxingBuilder::Reshape(const EdgeContext& context, const std::string& name,
                                  RegisterId input, const std::vector<int64_t>& dims) {
  const TaskRegister& source = tasks_.register_at(input);
  AttributeMap attributes;
  attributes.Set("shape", dims);
  return AddTask(context, name, proto::ACTOR_KIND_BOXING, source.device, "reshape",
                 std::move(attributes), {input}, {TensorType{source.type.dtype, Shape(dims)}})[0];
}

RegisterId BoxingBuilder::Fill(const EdgeContext& context, const std::string& name, int device,
                               const TensorType& type) {
  AttributeMap attributes;
  attributes.Set("shape", type.shape.dims());
  attributes.Set("value", 0.0);
  return AddTask(context, name, proto::ACTOR_KIND_BOXING, device, "fill", std::move(attributes), {},
                 {type})[0];
}

BoxingBuilder::EdgeContext BoxingBuilder::EdgeContext::WithRegisterTensor(TensorId tensor) const {
  EdgeContext context = *this;
  context.register_tensor = tensor;
  return context;
}

BoxingBuilder::EdgeContext BoxingBuilder::ContextOf(const BoxingEdge& edge,
                                                    const std::string& name) const {
  EdgeContext context;
  context.edge = &edge;
  context.name = name;
  context.period = compilation_.graph.tensor(edge.tensor).period;
  context.register_tensor = edge.tensor;
  return context;
}

std::vector<RegisterId> BoxingBuilder::Build(const BoxingEdge& edge,
                                             const std::vector<RegisterId>& from,
                                             const std::string& name) {
  const EdgeContext context = ContextOf(edge, name);
  if (edge.plan.general) return General(context, from);
  std::vector<RegisterId> current = from;
  for (const placement::BoxingStep& step : edge.plan.steps) current = Step(context, step, current);
  return current;
}

std::vector<RegisterId> BoxingBuilder::Step(const EdgeContext& context,
                                            const placement::BoxingStep& step,
                                            const std::vector<RegisterId>& from) {
  const placement::DeviceMesh& mesh = compilation_.meshes[context.edge->from_mesh];
  const TensorType& logical = compilation_.graph.tensor(context.edge->tensor).type;
  const int axis = step.mesh_axis;
  placement::NdSbp whole_sbp = step.from;
  whole_sbp[axis] = placement::Sbp::Broadcast();
  const bool both_axes = mesh.shape[0] > 1 && mesh.shape[1] > 1;
  std::vector<RegisterId> result(from.size(), -1);
  for (int other = 0; other < mesh.shape[1 - axis]; ++other) {
    Group group;
    std::vector<int> linear;
    for (int i = 0; i < mesh.shape[axis]; ++i) {
      placement::MeshCoordinate at;
      at[axis] = i;
      at[1 - axis] = other;
      linear.push_back(mesh.Linear(at));
      group.devices.push_back(mesh.devices[linear.back()]);
      group.inputs.push_back(from[linear.back()]);
    }
    group.outputs.assign(group.size(), -1);
    group.whole = placement::LocalDims(logical.shape.dims(), whole_sbp, mesh.shape);
    group.dtype = logical.dtype;
    group.label = context.name + "." + placement::BoxingMethodName(step.method) +
                  (both_axes ? std::string(".") + kAxisLabels[axis] : "");
    const placement::Sbp& to = step.to[axis];
    const placement::Sbp& before = step.from[axis];
    switch (step.method) {
      case BoxingMethod::kLocalSlice:
        for (int i = 0; i < group.size(); ++i) {
          std::vector<int64_t> begin(group.whole.size(), 0);
          std::vector<int64_t> end = group.whole;
          begin[to.axis] = group.PartBegin(to.axis, i);
          end[to.axis] = group.PartEnd(to.axis, i);
          group.outputs[i] =
              Slice(context, group.label, group.inputs[i], group.devices[i], begin, end);
        }
        break;
      case BoxingMethod::kAllGather:
        AllGather(context, group, before.axis);
        break;
      case BoxingMethod::kAllReduce:
        AllReduce(context, group);
        break;
      case BoxingMethod::kReduceScatter:
        ReduceScatter(context, group, to.axis);
        break;
      case BoxingMethod::kAllToAll:
        AllToAll(context, group, before.axis, to.axis);
        break;
      case BoxingMethod::kZeroFill:
        ZeroFill(context, group);
        break;
      case BoxingMethod::kPadToPartial:
        PadToPartial(context, group, before.axis);
        break;
    }
    for (int i = 0; i < group.size(); ++i) result[linear[i]] = group.outputs[i];
  }
  return result;
}

// Each member's values, flattened and packed in bucket order, are all-reduced as one value.
// The elements of each edge's value and its flat type are those of every member.
struct BoxingBuilder::BucketLayout {
  std::vector<int64_t> sizes;
  std::vector<TensorType> pieces;
  int64_t total = 0;
};

namespace {

// Linear mesh positions of the bucket's ring number `other`: the whole mesh, or the positions
// along `axis` at `other` on the other axis.
std::vector<int> BucketGroupPositions(const placement::DeviceMesh& mesh, bool whole_mesh, int axis,
                                      int other) {
  std::vector<int> linear;
  if (whole_mesh) {
    for (int i = 0; i < mesh.size(); ++i) linear.push_back(i);
    return linear;
  }
  for (int i = 0; i < mesh.shape[axis]; ++i) {
    placement::MeshCoordinate at;
    at[axis] = i;
    at[1 - axis] = other;
    linear.push_back(mesh.Linear(at));
  }
  return linear;
}

}  // namespace

std::vector<std::vector<RegisterId>> BoxingBuilder::BuildBucket(
    const GradientBucket& bucket, const std::vector<const std::vector<RegisterId>*>& from,
    const std::string& name) {
  const placement::DeviceMesh& mesh = compilation_.meshes[bucket.mesh];
  const bool whole_mesh = bucket.mesh_axis == GradientBucket::kWholeMesh;
  const int axis = whole_mesh ? 0 : bucket.mesh_axis;
  std::vector<std::vector<RegisterId>> before;
  for (const std::vector<RegisterId>* registers : from) before.push_back(*registers);
  const std::vector<size_t> after_reduce = StepsBeforeReduce(bucket, before);
  // The packed value is no one tensor's; its tasks take the first edge's period and stage.
  const EdgeContext context =
      ContextOf(compilation_.boxing[bucket.edges.front()], name).WithRegisterTensor(-1);
  std::vector<std::vector<RegisterId>> result(bucket.edges.size(),
                                              std::vector<RegisterId>(mesh.size(), -1));
  const int groups = whole_mesh ? 1 : mesh.shape[1 - axis];
  for (int other = 0; other < groups; ++other) {
    ReduceBucketGroup(context, bucket, BucketGroupPositions(mesh, whole_mesh, axis, other), before,
                      result);
  }
  StepsAfterReduce(bucket, after_reduce, result);
  return result;
}

std::vector<size_t> BoxingBuilder::StepsBeforeReduce(const GradientBucket& bucket,
                                                     std::vector<std::vector<RegisterId>>& values) {
  std::vector<size_t> after_reduce(bucket.edges.size(), 0);
  for (size_t i = 0; i < bucket.edges.size(); ++i) {
    const BoxingEdge& edge = compilation_.boxing[bucket.edges[i]];
    const EdgeContext context = ContextOf(edge, compilation_.graph.tensor(edge.tensor).name);
    size_t k = 0;
    while (edge.plan.steps[k].method != BoxingMethod::kAllReduce) {
      values[i] = Step(context, edge.plan.steps[k++], values[i]);
    }
    while (k < edge.plan.steps.size() && edge.plan.steps[k].method == BoxingMethod::kAllReduce) {
      ++k;
    }
    after_reduce[i] = k;
  }
  return after_reduce;
}

void BoxingBuilder::ReduceBucketGroup(const EdgeContext& context, const GradientBucket& bucket,
                                      const std::vector<int>& linear,
                                      const std::vector<std::vector<RegisterId>>& before,
                                      std::vector<std::vector<RegisterId>>& result) {
  const placement::DeviceMesh& mesh = compilation_.meshes[bucket.mesh];
  const bool whole_mesh = bucket.mesh_axis == GradientBucket::kWholeMesh;
  const bool both_axes = mesh.shape[0] > 1 && mesh.shape[1] > 1;
  Group group;
  for (int index : linear) group.devices.push_back(mesh.devices[index]);
  group.label = context.name + ".all_reduce" +
                (both_axes && !whole_mesh ? std::string(".") + kAxisLabels[bucket.mesh_axis] : "");
  group.dtype = DType::kFloat32;
  const BucketLayout layout = LayoutOf(before, linear.front());
  for (size_t m = 0; m < linear.size(); ++m) {
    group.inputs.push_back(Pack(context, bucket, layout, before, linear[m], group.devices[m]));
  }
  group.whole = {layout.total};
  group.outputs.assign(group.size(), -1);
  AllReduce(context, group);
  for (size_t m = 0; m < linear.size(); ++m) {
    Unpack(context, bucket, layout, group.outputs[m], linear[m], group.devices[m], before, result);
  }
}

BoxingBuilder::BucketLayout BoxingBuilder::LayoutOf(
    const std::vector<std::vector<RegisterId>>& before, int member) const {
  BucketLayout layout;
  for (const std::vector<RegisterId>& values : before) {
    const TensorType& type = tasks_.register_at(values[member]).type;
    const int64_t elements = type.NumElements();
    layout.sizes.push_back(elements);
    layout.pieces.push_back(TensorType{type.dtype, Shape({elements})});
    layout.total += elements;
  }
  return layout;
}

// Flattens the member's value of every edge (a reshape unless already 1-D) and concatenates them.
RegisterId BoxingBuilder::Pack(const EdgeContext& context, const GradientBucket& bucket,
                               const BucketLayout& layout,
                               const std::vector<std::vector<RegisterId>>& before, int member,
                               int device) {
  std::vector<RegisterId> flat;
  for (size_t i = 0; i < before.size(); ++i) {
    const RegisterId value = before[i][member];
    const TensorType& type = tasks_.register_at(value).type;
    const TensorId tensor = compilation_.boxing[bucket.edges[i]].tensor;
    const std::string& tensor_name = compilation_.graph.tensor(tensor).name;
    flat.push_back(type.shape.rank() == 1
                       ? value
                       : Reshape(context.WithRegisterTensor(tensor), tensor_name + ".flat", value,
                                 {type.NumElements()}));
  }
  AttributeMap attributes;
  attributes.Set("shape", std::vector<int64_t>{layout.total});
  return AddTask(context, context.name + ".pack", proto::ACTOR_KIND_BOXING, device, "flat_concat",
                 std::move(attributes), flat,
                 {TensorType{DType::kFloat32, Shape({layout.total})}})[0];
}

// Splits the member's reduced pack into the edges' values and reshapes each back.
void BoxingBuilder::Unpack(const EdgeContext& context, const GradientBucket& bucket,
                           const BucketLayout& layout, RegisterId reduced, int member, int device,
                           const std::vector<std::vector<RegisterId>>& before,
                           std::vector<std::vector<RegisterId>>& result) {
  AttributeMap attributes;
  attributes.Set("sizes", layout.sizes);
  std::vector<RegisterId> unpacked =
      AddTask(context, context.name + ".unpack", proto::ACTOR_KIND_BOXING, device, "flat_split",
              std::move(attributes), {reduced}, layout.pieces);
  for (size_t i = 0; i < before.size(); ++i) {
    const TensorId tensor = compilation_.boxing[bucket.edges[i]].tensor;
    const std::string& tensor_name = compilation_.graph.tensor(tensor).name;
    const TensorType& type = tasks_.register_at(before[i][member]).type;
    result[i][member] = type.shape.rank() == 1
                            ? unpacked[i]
                            : Reshape(context.WithRegisterTensor(tensor), tensor_name + ".reduced",
                                      unpacked[i], type.shape.dims());
  }
}

void BoxingBuilder::StepsAfterReduce(const GradientBucket& bucket,
                                     const std::vector<size_t>& after_reduce,
                                     std::vector<std::vector<RegisterId>>& result) {
  for (size_t i = 0; i < bucket.edges.size(); ++i) {
    const BoxingEdge& edge = compilation_.boxing[bucket.edges[i]];
    const EdgeContext context = ContextOf(edge, compilation_.graph.tensor(edge.tensor).name);
    for (size_t k = after_reduce[i]; k < edge.plan.steps.size(); ++k) {
      result[i] = Step(context, edge.plan.steps[k], result[i]);
    }
  }
}

// S(axis) -> B: part p travels the ring from member p (n-1 copies); every member assembles the
// n parts in order.
void BoxingBuilder::AllGather(const EdgeContext& context, Group& group, int axis) {
  const int n = group.size();
  const int rank = static_cast<int>(group.whole.size());
  std::vector<std::vector<RegisterId>> held(n, std::vector<RegisterId>(n, -1));
  for (int m = 0; m < n; ++m) held[m][m] = group.inputs[m];
  for (int part = 0; part < n; ++part) {
    for (int step = 1; step < n; ++step) {
      const int previous = (part + step - 1) % n;
      const int member = (part + step) % n;
      held[member][part] = Copy(context, group.label + ".p" + std::to_string(part),
                                held[previous][part], group.devices[member]);
    }
  }
  for (int m = 0; m < n; ++m) {
    std::vector<int64_t> offsets;
    for (int part = 0; part < n; ++part) {
      std::vector<int64_t> at = Offsets(rank, axis, group.PartBegin(axis, part));
      offsets.insert(offsets.end(), at.begin(), at.end());
    }
    group.outputs[m] =
        Assemble(context, group.label, group.devices[m], held[m], group.whole, offsets);
  }
}

// P -> B: flat chunks reduced along the ring, then passed on, then concatenated.
void BoxingBuilder::AllReduce(const EdgeContext& context, Group& group) {
  const int n = group.size();
  int64_t elements = 1;
  for (int64_t d : group.whole) elements *= d;
  const int sub_chunks = static_cast<int>(std::min<int64_t>(
      RingSubChunks(elements / n * static_cast<int64_t>(SizeOf(group.dtype))), elements / n));
  const int chunks = n * std::max(1, sub_chunks);
  std::vector<int64_t> sizes;
  for (int q = 0; q < chunks; ++q)
    sizes.push_back((q + 1) * elements / chunks - q * elements / chunks);
  std::vector<TensorType> chunk_types;
  for (int64_t size : sizes) chunk_types.push_back(TensorType{group.dtype, Shape({size})});

  std::vector<std::vector<RegisterId>> own(n);  // own[m][q]: member m's chunk q.
  for (int m = 0; m < n; ++m) {
    AttributeMap attributes;
    attributes.Set("sizes", sizes);
    own[m] = AddTask(context, group.label + ".split", proto::ACTOR_KIND_BOXING, group.devices[m],
                     "flat_split", std::move(attributes), {group.inputs[m]}, chunk_types);
  }
  const int per_member = chunks / n;
  std::vector<std::vector<RegisterId>> full(n, std::vector<RegisterId>(chunks, -1));
  for (int q = 0; q < chunks; ++q) {
    const int owner = q / per_member;
    const std::string chunk = group.label + ".c" + std::to_string(q);
    const int start = (owner + 1) % n;
    RegisterId running = own[start][q];
    for (int step = 1; step < n; ++step) {
      const int member = (start + step) % n;
      const std::string name = chunk + ".s" + std::to_string(step);
      RegisterId arrived = Copy(context, name + ".copy", running, group.devices[member]);
      running = Add(context, name + ".add", arrived, own[member][q]);
    }
    full[owner][q] = running;
    for (int step = 1; step < n; ++step) {
      const int member = (owner + step) % n;
      full[member][q] = Copy(context, chunk + ".g" + std::to_string(step),
                             full[(owner + step - 1) % n][q], group.devices[member]);
    }
  }
  for (int m = 0; m < n; ++m) {
    AttributeMap attributes;
    attributes.Set("shape", group.whole);
    group.outputs[m] =
        AddTask(context, group.label, proto::ACTOR_KIND_BOXING, group.devices[m], "flat_concat",
                std::move(attributes), full[m], {TensorType{group.dtype, Shape(group.whole)}})[0];
  }
}

// P -> S(axis): every member sums its part from the matching slice of every member's partial
// value: its own a local slice, the others slice-copies, one assemble adding them. n(n+1)
// actors per group and one transfer step; with the copies of one member serialized on its
// copy queue this moves what a ring reduce-scatter moves, in as many messages, with half the
// actors and no chain of n-1 dependent steps.
void BoxingBuilder::ReduceScatter(const EdgeContext& context, Group& group, int axis) {
  const int n = group.size();
  const int rank = static_cast<int>(group.whole.size());
  for (int part = 0; part < n; ++part) {
    std::vector<int64_t> begin(rank, 0);
    std::vector<int64_t> end = group.whole;
    begin[axis] = group.PartBegin(axis, part);
    end[axis] = group.PartEnd(axis, part);
    std::vector<RegisterId> terms;
    for (int member = 0; member < n; ++member) {
      terms.push_back(Slice(context, group.label + ".from" + std::to_string(group.devices[member]),
                            group.inputs[member], group.devices[part], begin, end));
    }
    std::vector<int64_t> shape = group.whole;
    shape[axis] = end[axis] - begin[axis];
    group.outputs[part] = Assemble(context, group.label, group.devices[part], terms, shape,
                                   std::vector<int64_t>(static_cast<size_t>(rank) * n, 0));
  }
}

// S(from_axis) -> S(to_axis): member j gathers block (i, j) of every member i: rows of part i of
// from_axis, columns of part j of to_axis. Its own block is a local slice; the others
// slice-copies; an assemble puts them in place.
void BoxingBuilder::AllToAll(const EdgeContext& context, Group& group, int from_axis, int to_axis) {
  const int n = group.size();
  const int rank = static_cast<int>(group.whole.size());
  for (int j = 0; j < n; ++j) {
    std::vector<RegisterId> blocks;
    std::vector<int64_t> offsets;
    for (int i = 0; i < n; ++i) {
      const TensorType& held = tasks_.register_at(group.inputs[i]).type;
      std::vector<int64_t> begin(rank, 0);
      std::vector<int64_t> end = held.shape.dims();
      begin[to_axis] = group.PartBegin(to_axis, j);
      end[to_axis] = group.PartEnd(to_axis, j);
      blocks.push_back(Slice(context, group.label + ".from" + std::to_string(group.devices[i]),
                             group.inputs[i], group.devices[j], begin, end));
      std::vector<int64_t> at = Offsets(rank, from_axis, group.PartBegin(from_axis, i));
      offsets.insert(offsets.end(), at.begin(), at.end());
    }
    std::vector<int64_t> shape = group.whole;
    shape[to_axis] = group.PartEnd(to_axis, j) - group.PartBegin(to_axis, j);
    group.outputs[j] = Assemble(context, group.label, group.devices[j], blocks, shape, offsets);
  }
}

// B -> P: member 0 keeps the value; the others hold zeros.
void BoxingBuilder::ZeroFill(const EdgeContext& context, Group& group) {
  group.outputs[0] = group.inputs[0];
  for (int m = 1; m < group.size(); ++m) {
    group.outputs[m] =
        Fill(context, group.label, group.devices[m], TensorType{group.dtype, Shape(group.whole)});
  }
}

// S(axis) -> P: each member places its part in zeros of the whole.
void BoxingBuilder::PadToPartial(const EdgeContext& context, Group& group, int axis) {
  const int rank = static_cast<int>(group.whole.size());
  for (int m = 0; m < group.size(); ++m) {
    group.outputs[m] = Assemble(context, group.label, group.devices[m], {group.inputs[m]},
                                group.whole, Offsets(rank, axis, group.PartBegin(axis, m)));
  }
}

// Every destination part from the blocks of source parts that overlap it: the source part
// itself when it is the whole block (copied when on another device), else a slice (a
// slice-copy across devices); an assemble when there are several blocks or a smaller one.
std::vector<RegisterId> BoxingBuilder::General(const EdgeContext& context,
                                               const std::vector<RegisterId>& from) {
  const placement::DeviceMesh& source = compilation_.meshes[context.edge->from_mesh];
  const placement::DeviceMesh& target = compilation_.meshes[context.edge->to_mesh];
  const TensorType& logical = compilation_.graph.tensor(context.edge->tensor).type;
  const std::vector<int64_t>& dims = logical.shape.dims();
  const int rank = static_cast<int>(dims.size());
  std::vector<RegisterId> result(target.size(), -1);
  for (int j = 0; j < target.size(); ++j) {
    const placement::DestinationPart& part = context.edge->plan.parts[j];
    const int device = target.devices[j];
    std::vector<int64_t> region_dims;
    for (int axis = 0; axis < rank; ++axis) {
      region_dims.push_back(part.region.end[axis] - part.region.begin[axis]);
    }
    if (part.zero) {
      result[j] = Fill(context, context.name + ".zero", device,
                       TensorType{logical.dtype, Shape(region_dims)});
      continue;
    }
    std::vector<RegisterId> blocks;
    std::vector<int64_t> offsets;
    for (const placement::SourceBlock& block : part.blocks) {
      const int source_device = source.devices[block.source];
      const placement::TensorBox held = placement::PartBox(dims, context.edge->from, source.shape,
                                                           source.Coordinate(block.source));
      const RegisterId input = from[block.source];
      const std::string label = context.name + ".from" + std::to_string(source_device);
      if (block.box == held) {
        blocks.push_back(source_device == device ? input : Copy(context, label, input, device));
      } else {
        std::vector<int64_t> begin;
        std::vector<int64_t> end;
        for (int axis = 0; axis < rank; ++axis) {
          begin.push_back(block.box.begin[axis] - held.begin[axis]);
          end.push_back(block.box.end[axis] - held.begin[axis]);
        }
        blocks.push_back(Slice(context, label, input, device, begin, end));
      }
      for (int axis = 0; axis < rank; ++axis) {
        offsets.push_back(block.box.begin[axis] - part.region.begin[axis]);
      }
    }
    const bool whole_block = part.blocks.size() == 1 && part.blocks[0].box == part.region;
    result[j] = whole_block ? blocks[0]
                            : Assemble(context, context.name + ".gather", device, blocks,
                                       region_dims, offsets);
  }
  return result;
}

}  // namespace compiler
}  // namespace softwire
