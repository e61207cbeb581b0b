// The boxing actors move the right numbers: for every pair of layouts on several meshes, the
// tasks BoxingBuilder makes are run on random values (with trivial kernels for copy, slice,
// assemble, flat_split, flat_concat, add and fill), and every destination part must hold what
// the destination layout says (partial terms must sum to the value), and BoxingActorsPerDevice
// must count the actors built on the busiest device. Plus the structure the design promises: a ring
// all-reduce has 2(n-1) ring steps per chunk.
#include "compiler/physical/boxing_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "compiler/ops/op_registry.h"
#include "compiler/physical/boxing_actor_count.h"
#include "compiler/testing/compiler_test_util.h"
#include "placement/cluster_spec.h"

namespace softwire {
namespace compiler {
namespace {

using placement::NdSbp;
using placement::Sbp;

using Values = std::vector<double>;

// Row-major index helpers for small dense tensors.
int64_t Offset(const std::vector<int64_t>& dims, const std::vector<int64_t>& index) {
  int64_t offset = 0;
  for (size_t axis = 0; axis < dims.size(); ++axis) offset = offset * dims[axis] + index[axis];
  return offset;
}

bool Next(const std::vector<int64_t>& dims, std::vector<int64_t>* index) {
  for (int axis = static_cast<int>(dims.size()) - 1; axis >= 0; --axis) {
    if (++(*index)[axis] < dims[axis]) return true;
    (*index)[axis] = 0;
  }
  return false;
}

// The block [begin, begin + dims) of `value` (of `whole` dims).
Values Block(const Values& value, const std::vector<int64_t>& whole,
             const std::vector<int64_t>& begin, const std::vector<int64_t>& dims) {
  Values block;
  std::vector<int64_t> index(dims.size(), 0);
  if (Shape(dims).NumElements() == 0) return block;
  do {
    std::vector<int64_t> at = index;
    for (size_t axis = 0; axis < at.size(); ++axis) at[axis] += begin[axis];
    block.push_back(value[Offset(whole, at)]);
  } while (Next(dims, &index));
  return block;
}

// Runs the transfer kernels of docs/OPS.md on doubles.
std::vector<Values> RunKernel(const TaskDef& task, const std::vector<const Values*>& inputs,
                              const std::vector<TensorType>& input_types,
                              const std::vector<TensorType>& output_types) {
  const AttributeMap& attributes = task.attributes;
  if (task.op_type == "copy") return {*inputs[0]};
  if (task.op_type == "add") {
    Values sum = *inputs[0];
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += (*inputs[1])[i];
    return {sum};
  }
  if (task.op_type == "fill") {
    return {Values(output_types[0].NumElements(), attributes.GetFloat("value"))};
  }
  if (task.op_type == "slice") {
    const std::vector<int64_t>& begin = attributes.GetInts("begin");
    return {Block(*inputs[0], input_types[0].shape.dims(), begin, output_types[0].shape.dims())};
  }
  if (task.op_type == "flat_split") {
    std::vector<Values> chunks;
    size_t at = 0;
    for (int64_t size : attributes.GetInts("sizes")) {
      chunks.emplace_back(inputs[0]->begin() + at, inputs[0]->begin() + at + size);
      at += size;
    }
    return chunks;
  }
  if (task.op_type == "flat_concat") {
    Values joined;
    for (const Values* input : inputs) joined.insert(joined.end(), input->begin(), input->end());
    return {joined};
  }
  CHECK_EQ(task.op_type, "assemble");
  const std::vector<int64_t> shape = attributes.GetInts("shape");
  const std::vector<int64_t>& offsets = attributes.GetInts("offsets");
  Values y(Shape(shape).NumElements(), 0);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::vector<int64_t>& dims = input_types[k].shape.dims();
    std::vector<int64_t> index(dims.size(), 0);
    size_t flat = 0;
    do {
      std::vector<int64_t> at = index;
      for (size_t axis = 0; axis < at.size(); ++axis) at[axis] += offsets[k * shape.size() + axis];
      y[Offset(shape, at)] += (*inputs[k])[flat++];
    } while (!dims.empty() && Next(dims, &index));
  }
  return {y};
}

class BoxingHarness {
 public:
  BoxingHarness() : registry_(MakeStandardOps()), compilation_(job_file_, options_, registry_) {
    StatusOr<placement::ClusterModel> model =
        placement::ClusterModel::Build(*placement::ParseClusterShorthand("2x4sim", 8));
    CHECK(model.ok());
    compilation_.cluster = std::move(model).value();
    compilation_.schedule = {true, 1, 8, 1};
  }

  int AddMesh(std::vector<int> devices, placement::MeshShape shape) {
    compilation_.meshes.push_back({std::move(devices), shape});
    return static_cast<int>(compilation_.meshes.size()) - 1;
  }

  // Boxes a random float32 tensor of `dims` from (from_mesh, from) to (to_mesh, to), runs the
  // actors and checks every destination part. Returns the plan's description.
  std::string Check(const std::vector<int64_t>& dims, int from_mesh, NdSbp from, int to_mesh,
                    NdSbp to) {
    TaskGraph tasks;
    const std::string name = "t" + std::to_string(tensor_count_++);
    TensorId tensor = *compilation_.graph.AddTensor(name, TensorType{DType::kFloat32, Shape(dims)});
    compilation_.graph.mutable_tensor(tensor).period = 1;
    const placement::DeviceMesh& source = compilation_.meshes[from_mesh];
    const placement::DeviceMesh& target = compilation_.meshes[to_mesh];

    std::mt19937 random(tensor);
    std::uniform_real_distribution<double> uniform(-1, 1);
    Values value(Shape(dims).NumElements());
    for (double& v : value) v = uniform(random);

    // Source parts: blocks of the value; partial terms random but summing to it.
    std::map<RegisterId, Values> held;
    std::vector<RegisterId> parts;
    std::vector<Values> terms(source.size());
    for (int at = 0; at < source.size(); ++at) {
      placement::MeshCoordinate coordinate = source.Coordinate(at);
      placement::TensorBox box = placement::PartBox(dims, from, source.shape, coordinate);
      std::vector<int64_t> local(dims.size());
      for (size_t axis = 0; axis < dims.size(); ++axis)
        local[axis] = box.end[axis] - box.begin[axis];
      terms[at] = Block(value, dims, box.begin, local);
      TaskDef producer;
      producer.name = name + ".source@" + std::to_string(source.devices[at]);
      producer.device = source.devices[at];
      producer.period = 1;
      producer.firings = 1;
      producer.op_type = "source";
      TaskId id = tasks.AddTask(producer);
      TaskRegister reg;
      reg.name = producer.name;
      reg.producer = id;
      reg.device = producer.device;
      reg.type = TensorType{DType::kFloat32, Shape(local)};
      reg.period = 1;
      parts.push_back(tasks.AddRegister(reg));
    }
    // Partial axes: every coordinate but the last on each P axis holds a random term; the last
    // holds the rest, so the sum over the axis is the value.
    for (int k = 0; k < placement::kMeshAxes; ++k) {
      if (!from[k].is_partial() || source.shape[k] == 1) continue;
      for (int at = 0; at < source.size(); ++at) {
        placement::MeshCoordinate coordinate = source.Coordinate(at);
        if (coordinate[k] != 0) continue;
        for (int i = 1; i < source.shape[k]; ++i) {
          placement::MeshCoordinate other = coordinate;
          other[k] = i;
          Values& mine = terms[source.Linear(other)];
          for (size_t e = 0; e < mine.size(); ++e) {
            double term = uniform(random);
            mine[e] = term;
            terms[at][e] -= term;
          }
        }
      }
    }
    for (int at = 0; at < source.size(); ++at) held[parts[at]] = terms[at];

    BoxingEdge edge;
    edge.tensor = tensor;
    edge.from_mesh = from_mesh;
    edge.from = from;
    edge.to_mesh = to_mesh;
    edge.to = to;
    const placement::CostModel cost(*compilation_.cluster);
    const placement::BoxingRequest request{
        &source, from, &target, to, &compilation_.graph.tensor(tensor).type.shape.dims(), 4};
    edge.plan = placement::PlanBoxing(cost, request);
    if (!edge.plan.needed) {
      EXPECT_EQ(BoxingActorsPerDevice(edge.plan, request), 0);
      return "none";
    }
    BoxingBuilder builder(compilation_, tasks);
    const TaskId first = static_cast<TaskId>(tasks.tasks().size());
    std::vector<RegisterId> result = builder.Build(edge, parts, name);
    // What the sbp search charges for: the actors on the busiest device.
    std::map<int, int> actors_per_device;
    for (TaskId id = first; id < static_cast<TaskId>(tasks.tasks().size()); ++id) {
      ++actors_per_device[tasks.task(id).device];
    }
    int most = 0;
    for (const auto& [device, actors] : actors_per_device) most = std::max(most, actors);
    EXPECT_EQ(BoxingActorsPerDevice(edge.plan, request), most)
        << placement::NdSbpToString(from) << " on " << source.ToString() << " -> "
        << placement::NdSbpToString(to) << " on " << target.ToString() << ": "
        << edge.plan.Describe();
    // Tasks come after their inputs: run them in creation order.
    for (TaskId id = first; id < static_cast<TaskId>(tasks.tasks().size()); ++id) {
      const TaskDef& task = tasks.task(id);
      std::vector<const Values*> inputs;
      for (RegisterId input : task.inputs) {
        CHECK(held.count(input)) << task.name << " reads a register not yet written";
        CHECK(task.kind == proto::ACTOR_KIND_COPY || tasks.register_at(input).device == task.device)
            << task.name << " reads across devices without being a copy";
        inputs.push_back(&held.at(input));
      }
      std::vector<Values> outputs =
          RunKernel(task, inputs, tasks.InputTypes(id), tasks.OutputTypes(id));
      for (size_t k = 0; k < task.outputs.size(); ++k) {
        CHECK_EQ(static_cast<int64_t>(outputs[k].size()),
                 tasks.register_at(task.outputs[k]).type.NumElements())
            << task.name;
        held[task.outputs[k]] = outputs[k];
      }
    }
    ExpectLayout(dims, value, target, to, result, held, tasks);
    return edge.plan.Describe();
  }

  const TaskGraph* last_tasks = nullptr;

 private:
  void ExpectLayout(const std::vector<int64_t>& dims, const Values& value,
                    const placement::DeviceMesh& target, const NdSbp& to,
                    const std::vector<RegisterId>& result, const std::map<RegisterId, Values>& held,
                    const TaskGraph& tasks) {
    const std::string layout = placement::NdSbpToString(to) + " on " + target.ToString();
    // Sum the partial terms over every P axis into coordinate 0 of that axis.
    std::vector<Values> summed(target.size());
    for (int at = 0; at < target.size(); ++at) {
      ASSERT_EQ(tasks.register_at(result[at]).device, target.devices[at]) << layout;
      summed[at] = held.at(result[at]);
    }
    for (int k = 0; k < placement::kMeshAxes; ++k) {
      if (!to[k].is_partial() || target.shape[k] == 1) continue;
      for (int at = 0; at < target.size(); ++at) {
        placement::MeshCoordinate coordinate = target.Coordinate(at);
        if (coordinate[k] == 0) continue;
        placement::MeshCoordinate first = coordinate;
        first[k] = 0;
        Values& sum = summed[target.Linear(first)];
        for (size_t e = 0; e < sum.size(); ++e) sum[e] += summed[at][e];
      }
    }
    for (int at = 0; at < target.size(); ++at) {
      placement::MeshCoordinate coordinate = target.Coordinate(at);
      bool representative = true;
      for (int k = 0; k < placement::kMeshAxes; ++k) {
        representative &= !(to[k].is_partial() && target.shape[k] > 1 && coordinate[k] != 0);
      }
      if (!representative) continue;
      placement::TensorBox box = placement::PartBox(dims, to, target.shape, coordinate);
      std::vector<int64_t> local(dims.size());
      for (size_t axis = 0; axis < dims.size(); ++axis)
        local[axis] = box.end[axis] - box.begin[axis];
      Values expected = Block(value, dims, box.begin, local);
      ASSERT_EQ(summed[at].size(), expected.size()) << layout << " position " << at;
      for (size_t e = 0; e < expected.size(); ++e) {
        ASSERT_NEAR(summed[at][e], expected[e], 1e-12) << layout << " position " << at;
      }
    }
  }

  JobFile job_file_;
  CompileOptions options_;
  OpRegistry registry_;
  Compilation compilation_;
  int tensor_count_ = 0;
};

std::vector<Sbp> Sbps() {
  return {Sbp::Broadcast(), Sbp::Partial(), Sbp::Split(0), Sbp::Split(1)};
}

TEST(BoxingBuilder, MovesTheRightValuesBetweenEveryPairOfLayoutsOnOneMesh) {
  BoxingHarness harness;
  const std::vector<std::pair<std::vector<int>, placement::MeshShape>> meshes = {
      {{0, 1}, {2, 1}}, {{0, 1, 2, 3}, {1, 4}}, {{0, 1, 2, 3}, {2, 2}}, {{4, 5, 0, 1}, {4, 1}}};
  int checked = 0;
  for (const auto& [devices, shape] : meshes) {
    const int mesh = harness.AddMesh(devices, shape);
    for (Sbp a0 : Sbps()) {
      for (Sbp a1 : Sbps()) {
        for (Sbp b0 : Sbps()) {
          for (Sbp b1 : Sbps()) {
            NdSbp from = placement::Normalized({a0, a1}, shape);
            NdSbp to = placement::Normalized({b0, b1}, shape);
            if (!placement::SplitsEvenly({8, 12}, from, shape) ||
                !placement::SplitsEvenly({8, 12}, to, shape)) {
              continue;
            }
            harness.Check({8, 12}, mesh, from, mesh, to);
            if (::testing::Test::HasFatalFailure()) return;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 300);
}

TEST(BoxingBuilder, MovesTheRightValuesBetweenMeshes) {
  BoxingHarness harness;
  const int stage0 = harness.AddMesh({0, 1, 2, 3}, {2, 2});
  const int stage1 = harness.AddMesh({4, 5, 6, 7}, {2, 2});
  const int one = harness.AddMesh({0}, {1, 1});
  const int column = harness.AddMesh({4, 5}, {1, 2});
  const std::vector<std::pair<int, int>> pairs = {
      {stage0, stage1}, {stage1, stage0}, {stage0, one}, {one, stage1}, {column, stage0}};
  for (const auto& [from_mesh, to_mesh] : pairs) {
    for (Sbp a0 : Sbps()) {
      for (Sbp a1 : Sbps()) {
        for (Sbp b0 : {Sbp::Broadcast(), Sbp::Split(1), Sbp::Partial()}) {
          for (Sbp b1 : {Sbp::Broadcast(), Sbp::Split(0), Sbp::Partial()}) {
            NdSbp from = {a0, a1};
            NdSbp to = {b0, b1};
            harness.Check({4, 6}, from_mesh, from, to_mesh, to);
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

TEST(BoxingBuilder, MovesScalarsAndInt32TensorsToOneDevice) {
  BoxingHarness harness;
  const int dp4 = harness.AddMesh({0, 1, 2, 3}, {4, 1});
  const int sink = harness.AddMesh({0}, {1, 1});
  EXPECT_EQ(
      harness.Check({}, dp4, {Sbp::Partial(), Sbp::Broadcast()}, sink, placement::AllBroadcast()),
      "general");
  EXPECT_EQ(
      harness.Check({}, dp4, {Sbp::Partial(), Sbp::Broadcast()}, dp4, placement::AllBroadcast()),
      "general");  // Fewer elements than ring members: gathered, not ring-reduced.
}

// docs/PARALLELISM.md: P -> B on n devices is a ring all-reduce with 2(n-1) ring steps per
// chunk: n-1 (copy, add) steps of the reduce-scatter and n-1 copies of the all-gather.
TEST(BoxingBuilder, BuildsARingAllReduceWithTwoTimesNMinusOneStepsPerChunk) {
  StatusOr<proto::Plan> plan = [] {
    CompileOptions options;
    options.cluster = *placement::ParseClusterShorthand("4cpu", 8);
    options.parallel.set_data_parallel(4);
    options.fold_views = false;  // The builder's tasks: fold_views reads the chunks as ranges.
    return CompileJobText(R"(
      name: "ring"
      source { name: "data" output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: 64 }
               output { name: "labels" dtype: DATA_TYPE_INT32 } synthetic { seed: 1 int_high: 8 } }
      variable { name: "w" dtype: DATA_TYPE_FLOAT32 dims: [64, 8]
                 initializer { normal { stddev: 0.1 seed: 1 } } }
      op { name: "fc" type: "matmul" input: ["x", "w"] output: "logits" }
      op { name: "xent" type: "softmax_cross_entropy" input: ["logits", "labels"] output: "l" }
      op { name: "mean" type: "reduce_mean" input: "l" output: "loss" }
      train { loss: "loss" optimizer { sgd { learning_rate: 0.1 } } steps: 2
              micro_batch_size: 16 micro_batches_per_step: 2 }
    )",
                          options);
  }();
  ASSERT_TRUE(plan.ok()) << plan.status();
  // The weight gradient is summed over the step first, then all-reduced once per step (in a
  // gradient bucket of its own: the job has one weight).
  std::map<std::string, int> copies_per_chunk;
  int adds = 0;
  int splits = 0;
  int concats = 0;
  for (const proto::ActorDef& actor : plan->actor()) {
    const std::string& name = actor.name();
    if (name.rfind("gradient_bucket0.all_reduce", 0) != 0) continue;
    EXPECT_EQ(actor.period(), 2) << name;
    const std::string& op = actor.kernel().op_type();
    if (op == "flat_split") ++splits;
    if (op == "flat_concat") ++concats;
    if (op == "add") ++adds;
    if (actor.kind() == proto::ACTOR_KIND_COPY) {
      EXPECT_EQ(actor.queue(), 1) << name;
      ++copies_per_chunk[name.substr(0, name.find(".", name.find(".c") + 1))];
    }
  }
  EXPECT_EQ(splits, 4);
  EXPECT_EQ(concats, 4);
  ASSERT_EQ(copies_per_chunk.size(), 4u);  // 2 KiB: one sub-chunk per ring position.
  for (const auto& [chunk, copies] : copies_per_chunk) {
    EXPECT_EQ(copies, 2 * (4 - 1)) << chunk;
  }
  EXPECT_EQ(adds, 4 * (4 - 1));
  const proto::ActorDef* update = FindActor(*plan, "w.update@2");
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(plan->register_def(update->input_register(0)).name(), "w.grad_accumulated.reduced@2");
}

TEST(RingSubChunks, CutsChunksOfSeveralMebibytesIntoUpToFourSubChunks) {
  EXPECT_EQ(RingSubChunks(1024), 1);
  EXPECT_EQ(RingSubChunks(int64_t{5} << 19), 2);
  EXPECT_EQ(RingSubChunks(int64_t{64} << 20), 4);
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
