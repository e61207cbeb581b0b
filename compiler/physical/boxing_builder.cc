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

std::vector<RegisterId> BoxingBuilder::AddTask(const std::string& label, proto::ActorKind kind,
                                               int device, const std::string& op_type,
                                               AttributeMap attributes,
                                               const std::vector<RegisterId>& inputs,
                                               const std::vector<TensorType>& outputs) {
  TaskDef task;
  task.name = At(label, device);
  task.kind = kind;
  task.device = device;
  task.queue = kind == proto::ACTOR_KIND_COPY ? 1 : 0;
  task.period = period_;
  task.firings = compilation_.schedule.total_pieces() / period_;
  task.op_type = op_type;
  task.attributes = std::move(attributes);
  task.logical_op = -1;
  task.stage = edge_->stage;
  const TaskId id = tasks_.AddTask(std::move(task));
  for (RegisterId input : inputs) tasks_.AddReader(input, id, 0);
  std::vector<RegisterId> registers;
  for (size_t k = 0; k < outputs.size(); ++k) {
    TaskRegister reg;
    reg.name = outputs.size() == 1 ? At(label, device) : At(label + "." + std::to_string(k), device);
    reg.producer = id;
    reg.device = device;
    reg.type = outputs[k];
    reg.period = period_;
    reg.logical_tensor = register_tensor_;
    registers.push_back(tasks_.AddRegister(std::move(reg)));
  }
  return registers;
}

RegisterId BoxingBuilder::Copy(const std::string& name, RegisterId input, int device) {
  return AddTask(name, proto::ACTOR_KIND_COPY, device, "copy", {}, {input},
                 {tasks_.register_at(input).type})[0];
}

RegisterId BoxingBuilder::Slice(const std::string& name, RegisterId input, int device,
                                const std::vector<int64_t>& begin,
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
  return AddTask(name, kind, device, "slice", std::move(attributes), {input},
                 {TensorType{source.type.dtype, Shape(std::move(dims))}})[0];
}

RegisterId BoxingBuilder::Add(const std::string& name, RegisterId a, RegisterId b) {
  const TaskRegister& left = tasks_.register_at(a);
  return AddTask(name, proto::ACTOR_KIND_BOXING, left.device, "add", {}, {a, b},
                 {left.type})[0];
}

RegisterId BoxingBuilder::Assemble(const std::string& name, int device,
                                   const std::vector<RegisterId>& inputs,
                                   const std::vector<int64_t>& shape,
                                   const std::vector<int64_t>& offsets) {
  AttributeMap attributes;
  attributes.Set("shape", shape);
  attributes.Set("offsets", offsets);
  const DType dtype = tasks_.register_at(inputs[0]).type.dtype;
  return AddTask(name, proto::ACTOR_KIND_BOXING, device, "assemble",
                 std::move(attributes), inputs, {TensorType{dtype, Shape(shape)}})[0];
}

RegisterId BoxingBuilder::Reshape(const std::string& name, RegisterId input,
                                  const std::vector<int64_t>& dims) {
  const TaskRegister& source = tasks_.register_at(input);
  AttributeMap attributes;
  attributes.Set("shape", dims);
  return AddTask(name, proto::ACTOR_KIND_BOXING, source.device, "reshape", std::move(attributes),
                 {input}, {TensorType{source.type.dtype, Shape(dims)}})[0];
}

RegisterId BoxingBuilder::Fill(const std::string& name, int device, const TensorType& type) {
  AttributeMap attributes;
  attributes.Set("shape", type.shape.dims());
  attributes.Set("value", 0.0);
  return AddTask(name, proto::ACTOR_KIND_BOXING, device, "fill", std::move(attributes),
                 {}, {type})[0];
}

std::vector<RegisterId> BoxingBuilder::Build(const BoxingEdge& edge,
                                             const std::vector<RegisterId>& from,
                                             const std::string& name) {
  edge_ = &edge;
  name_ = name;
  period_ = compilation_.graph.tensor(edge.tensor).period;
  register_tensor_ = edge.tensor;
  if (edge.plan.general) return General(from);
  std::vector<RegisterId> current = from;
  for (const placement::BoxingStep& step : edge.plan.steps) current = Step(step, current);
  return current;
}

std::vector<RegisterId> BoxingBuilder::Step(const placement::BoxingStep& step,
                                            const std::vector<RegisterId>& from) {
  const placement::DeviceMesh& mesh = compilation_.meshes[edge_->from_mesh];
  const TensorType& logical = compilation_.graph.tensor(edge_->tensor).type;
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
    group.label = name_ + "." + placement::BoxingMethodName(step.method) +
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
          group.outputs[i] = Slice(group.label, group.inputs[i], group.devices[i], begin, end);
        }
        break;
      case BoxingMethod::kAllGather:
        AllGather(group, before.axis);
        break;
      case BoxingMethod::kAllReduce:
        AllReduce(group);
        break;
      case BoxingMethod::kReduceScatter:
        ReduceScatter(group, to.axis);
        break;
      case BoxingMethod::kAllToAll:
        AllToAll(group, before.axis, to.axis);
        break;
      case BoxingMethod::kZeroFill:
        ZeroFill(group);
        break;
      case BoxingMethod::kPadToPartial:
        PadToPartial(group, before.axis);
        break;
    }
    for (int i = 0; i < group.size(); ++i) result[linear[i]] = group.outputs[i];
  }
  return result;
}

std::vector<std::vector<RegisterId>> BoxingBuilder::BuildBucket(
    const GradientBucket& bucket, const std::vector<const std::vector<RegisterId>*>& from,
    const std::string& name) {
  const placement::DeviceMesh& mesh = compilation_.meshes[bucket.mesh];
  const bool whole_mesh = bucket.mesh_axis == GradientBucket::kWholeMesh;
  const int axis = whole_mesh ? 0 : bucket.mesh_axis;
  const size_t count = bucket.edges.size();
  const bool both_axes = mesh.shape[0] > 1 && mesh.shape[1] > 1;
  // Each edge's steps before its all-reduce(s) and after them run on their own.
  std::vector<std::vector<RegisterId>> before(count);
  std::vector<size_t> after_reduce(count, 0);
  for (size_t i = 0; i < count; ++i) {
    const BoxingEdge& edge = compilation_.boxing[bucket.edges[i]];
    edge_ = &edge;
    name_ = compilation_.graph.tensor(edge.tensor).name;
    period_ = compilation_.graph.tensor(edge.tensor).period;
    register_tensor_ = edge.tensor;
    before[i] = *from[i];
    size_t k = 0;
    while (edge.plan.steps[k].method != placement::BoxingMethod::kAllReduce) {
      before[i] = Step(edge.plan.steps[k++], before[i]);
    }
    while (k < edge.plan.steps.size() &&
           edge.plan.steps[k].method == placement::BoxingMethod::kAllReduce) {
      ++k;
    }
    after_reduce[i] = k;
  }
  edge_ = &compilation_.boxing[bucket.edges.front()];
  name_ = name;
  period_ = compilation_.graph.tensor(edge_->tensor).period;
  std::vector<std::vector<RegisterId>> result(count, std::vector<RegisterId>(mesh.size(), -1));
  const int groups = whole_mesh ? 1 : mesh.shape[1 - axis];
  for (int other = 0; other < groups; ++other) {
    Group group;
    std::vector<int> linear;
    if (whole_mesh) {
      for (int i = 0; i < mesh.size(); ++i) linear.push_back(i);
    } else {
      for (int i = 0; i < mesh.shape[axis]; ++i) {
        placement::MeshCoordinate at;
        at[axis] = i;
        at[1 - axis] = other;
        linear.push_back(mesh.Linear(at));
      }
    }
    for (int index : linear) group.devices.push_back(mesh.devices[index]);
    group.label = name + ".all_reduce" +
                  (both_axes && !whole_mesh ? std::string(".") + kAxisLabels[axis] : "");
    group.dtype = DType::kFloat32;
    // Every member's values, flattened and packed in bucket order.
    std::vector<int64_t> sizes;
    std::vector<TensorType> pieces;
    for (size_t m = 0; m < linear.size(); ++m) {
      std::vector<RegisterId> flat;
      for (size_t i = 0; i < count; ++i) {
        const RegisterId value = before[i][linear[m]];
        const TensorType& type = tasks_.register_at(value).type;
        const int64_t elements = type.NumElements();
        if (m == 0) {
          sizes.push_back(elements);
          pieces.push_back(TensorType{type.dtype, Shape({elements})});
        }
        register_tensor_ = compilation_.boxing[bucket.edges[i]].tensor;
        const std::string tensor = compilation_.graph.tensor(register_tensor_).name;
        flat.push_back(type.shape.rank() == 1 ? value : Reshape(tensor + ".flat", value, {elements}));
      }
      register_tensor_ = -1;
      const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
      AttributeMap attributes;
      attributes.Set("shape", std::vector<int64_t>{total});
      group.inputs.push_back(AddTask(name + ".pack", proto::ACTOR_KIND_BOXING,
                                     group.devices[m], "flat_concat", std::move(attributes), flat,
                                     {TensorType{DType::kFloat32, Shape({total})}})[0]);
      group.whole = {total};
    }
    group.outputs.assign(group.size(), -1);
    AllReduce(group);
    for (size_t m = 0; m < linear.size(); ++m) {
      AttributeMap attributes;
      attributes.Set("sizes", sizes);
      std::vector<RegisterId> unpacked =
          AddTask(name + ".unpack", proto::ACTOR_KIND_BOXING, group.devices[m], "flat_split",
                  std::move(attributes), {group.outputs[m]}, pieces);
      for (size_t i = 0; i < count; ++i) {
        register_tensor_ = compilation_.boxing[bucket.edges[i]].tensor;
        const std::string tensor = compilation_.graph.tensor(register_tensor_).name;
        const TensorType& type = tasks_.register_at(before[i][linear[m]]).type;
        result[i][linear[m]] = type.shape.rank() == 1
                                   ? unpacked[i]
                                   : Reshape(tensor + ".reduced", unpacked[i], type.shape.dims());
      }
    }
  }
  // Steps after the all-reduce, per tensor.
  for (size_t i = 0; i < count; ++i) {
    const BoxingEdge& edge = compilation_.boxing[bucket.edges[i]];
    edge_ = &edge;
    name_ = compilation_.graph.tensor(edge.tensor).name;
    register_tensor_ = edge.tensor;
    for (size_t k = after_reduce[i]; k < edge.plan.steps.size(); ++k) {
      result[i] = Step(edge.plan.steps[k], result[i]);
    }
  }
  register_tensor_ = -1;
  return result;
}

// S(axis) -> B: part p travels the ring from member p (n-1 copies); every member assembles the
// n parts in order.
void BoxingBuilder::AllGather(Group& group, int axis) {
  const int n = group.size();
  const int rank = static_cast<int>(group.whole.size());
  std::vector<std::vector<RegisterId>> held(n, std::vector<RegisterId>(n, -1));
  for (int m = 0; m < n; ++m) held[m][m] = group.inputs[m];
  for (int part = 0; part < n; ++part) {
    for (int step = 1; step < n; ++step) {
      const int previous = (part + step - 1) % n;
      const int member = (part + step) % n;
      held[member][part] = Copy(group.label + ".p" + std::to_string(part),
                                held[previous][part], group.devices[member]);
    }
  }
  for (int m = 0; m < n; ++m) {
    std::vector<int64_t> offsets;
    for (int part = 0; part < n; ++part) {
      std::vector<int64_t> at = Offsets(rank, axis, group.PartBegin(axis, part));
      offsets.insert(offsets.end(), at.begin(), at.end());
    }
    group.outputs[m] = Assemble(group.label, group.devices[m], held[m], group.whole, offsets);
  }
}

// P -> B: flat chunks reduced along the ring, then passed on, then concatenated.
void BoxingBuilder::AllReduce(Group& group) {
  const int n = group.size();
  int64_t elements = 1;
  for (int64_t d : group.whole) elements *= d;
  const int sub_chunks = static_cast<int>(std::min<int64_t>(
      RingSubChunks(elements / n * static_cast<int64_t>(SizeOf(group.dtype))), elements / n));
  const int chunks = n * std::max(1, sub_chunks);
  std::vector<int64_t> sizes;
  for (int q = 0; q < chunks; ++q) sizes.push_back((q + 1) * elements / chunks - q * elements / chunks);
  std::vector<TensorType> chunk_types;
  for (int64_t size : sizes) chunk_types.push_back(TensorType{group.dtype, Shape({size})});

  std::vector<std::vector<RegisterId>> own(n);  // own[m][q]: member m's chunk q.
  for (int m = 0; m < n; ++m) {
    AttributeMap attributes;
    attributes.Set("sizes", sizes);
    own[m] = AddTask(group.label + ".split", proto::ACTOR_KIND_BOXING,
                     group.devices[m], "flat_split", std::move(attributes), {group.inputs[m]},
                     chunk_types);
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
      RegisterId arrived = Copy(name + ".copy", running, group.devices[member]);
      running = Add(name + ".add", arrived, own[member][q]);
    }
    full[owner][q] = running;
    for (int step = 1; step < n; ++step) {
      const int member = (owner + step) % n;
      full[member][q] = Copy(chunk + ".g" + std::to_string(step), full[(owner + step - 1) % n][q],
                             group.devices[member]);
    }
  }
  for (int m = 0; m < n; ++m) {
    AttributeMap attributes;
    attributes.Set("shape", group.whole);
    group.outputs[m] =
        AddTask(group.label, proto::ACTOR_KIND_BOXING, group.devices[m],
                "flat_concat", std::move(attributes), full[m],
                {TensorType{group.dtype, Shape(group.whole)}})[0];
  }
}

// P -> S(axis): every member sums its part from the matching slice of every member's partial
// value: its own a local slice, the others slice-copies, one assemble adding them. n(n+1)
// actors per group and one transfer step; with the copies of one member serialized on its
// copy queue this moves what a ring reduce-scatter moves, in as many messages, with half the
// actors and no chain of n-1 dependent steps.
void BoxingBuilder::ReduceScatter(Group& group, int axis) {
  const int n = group.size();
  const int rank = static_cast<int>(group.whole.size());
  for (int part = 0; part < n; ++part) {
    std::vector<int64_t> begin(rank, 0);
    std::vector<int64_t> end = group.whole;
    begin[axis] = group.PartBegin(axis, part);
    end[axis] = group.PartEnd(axis, part);
    std::vector<RegisterId> terms;
    for (int member = 0; member < n; ++member) {
      terms.push_back(Slice(group.label + ".from" + std::to_string(group.devices[member]),
                            group.inputs[member], group.devices[part], begin, end));
    }
    std::vector<int64_t> shape = group.whole;
    shape[axis] = end[axis] - begin[axis];
    group.outputs[part] = Assemble(group.label, group.devices[part], terms, shape,
                                   std::vector<int64_t>(static_cast<size_t>(rank) * n, 0));
  }
}

// S(from_axis) -> S(to_axis): member j gathers block (i, j) of every member i: rows of part i of
// from_axis, columns of part j of to_axis. Its own block is a local slice; the others
// slice-copies; an assemble puts them in place.
void BoxingBuilder::AllToAll(Group& group, int from_axis, int to_axis) {
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
      blocks.push_back(Slice(group.label + ".from" + std::to_string(group.devices[i]),
                             group.inputs[i], group.devices[j], begin, end));
      std::vector<int64_t> at = Offsets(rank, from_axis, group.PartBegin(from_axis, i));
      offsets.insert(offsets.end(), at.begin(), at.end());
    }
    std::vector<int64_t> shape = group.whole;
    shape[to_axis] = group.PartEnd(to_axis, j) - group.PartBegin(to_axis, j);
    group.outputs[j] = Assemble(group.label, group.devices[j], blocks, shape, offsets);
  }
}

// B -> P: member 0 keeps the value; the others hold zeros.
void BoxingBuilder::ZeroFill(Group& group) {
  group.outputs[0] = group.inputs[0];
  for (int m = 1; m < group.size(); ++m) {
    group.outputs[m] =
        Fill(group.label, group.devices[m], TensorType{group.dtype, Shape(group.whole)});
  }
}

// S(axis) -> P: each member places its part in zeros of the whole.
void BoxingBuilder::PadToPartial(Group& group, int axis) {
  const int rank = static_cast<int>(group.whole.size());
  for (int m = 0; m < group.size(); ++m) {
    group.outputs[m] = Assemble(group.label, group.devices[m], {group.inputs[m]}, group.whole,
                                Offsets(rank, axis, group.PartBegin(axis, m)));
  }
}

// Every destination part from the blocks of source parts that overlap it: the source part
// itself when it is the whole block (copied when on another device), else a slice (a
// slice-copy across devices); an assemble when there are several blocks or a smaller one.
std::vector<RegisterId> BoxingBuilder::General(const std::vector<RegisterId>& from) {
  const placement::DeviceMesh& source = compilation_.meshes[edge_->from_mesh];
  const placement::DeviceMesh& target = compilation_.meshes[edge_->to_mesh];
  const TensorType& logical = compilation_.graph.tensor(edge_->tensor).type;
  const std::vector<int64_t>& dims = logical.shape.dims();
  const int rank = static_cast<int>(dims.size());
  std::vector<RegisterId> result(target.size(), -1);
  for (int j = 0; j < target.size(); ++j) {
    const placement::DestinationPart& part = edge_->plan.parts[j];
    const int device = target.devices[j];
    std::vector<int64_t> region_dims;
    for (int axis = 0; axis < rank; ++axis) {
      region_dims.push_back(part.region.end[axis] - part.region.begin[axis]);
    }
    if (part.zero) {
      result[j] = Fill(name_ + ".zero", device, TensorType{logical.dtype, Shape(region_dims)});
      continue;
    }
    std::vector<RegisterId> blocks;
    std::vector<int64_t> offsets;
    for (const placement::SourceBlock& block : part.blocks) {
      const int source_device = source.devices[block.source];
      const placement::TensorBox held = placement::PartBox(
          dims, edge_->from, source.shape, source.Coordinate(block.source));
      const RegisterId input = from[block.source];
      const std::string label = name_ + ".from" + std::to_string(source_device);
      if (block.box == held) {
        blocks.push_back(source_device == device ? input : Copy(label, input, device));
      } else {
        std::vector<int64_t> begin;
        std::vector<int64_t> end;
        for (int axis = 0; axis < rank; ++axis) {
          begin.push_back(block.box.begin[axis] - held.begin[axis]);
          end.push_back(block.box.end[axis] - held.begin[axis]);
        }
        blocks.push_back(Slice(label, input, device, begin, end));
      }
      for (int axis = 0; axis < rank; ++axis) {
        offsets.push_back(block.box.begin[axis] - part.region.begin[axis]);
      }
    }
    const bool whole_block = part.blocks.size() == 1 && part.blocks[0].box == part.region;
    result[j] = whole_block ? blocks[0]
                            : Assemble(name_ + ".gather", device, blocks, region_dims, offsets);
  }
  return result;
}

}  // namespace compiler
}  // namespace softwire
