// check_deadlock simulates one data-parallel replica when the replicas are proven identical
// (compiler/replica_symmetry.h, docs/DECISIONS.md "The deadlock check simulates one replica"),
// and the whole plan when they are not; a deadlock in any replica is still found.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/file.h"
#include "compiler/passes/passes.h"
#include "compiler/replica_symmetry.h"
#include "compiler/slot_simulator.h"
#include "compiler/testing/compiler_test_util.h"
#include "compiler/testing/parallel_settings.h"

namespace softwire {
namespace compiler {
namespace {

using ::testing::HasSubstr;

std::string ExampleJob(const std::string& job) {
  StatusOr<std::string> text = ReadFile("tests/compiler/jobs/" + job + ".pbtxt");
  CHECK(text.ok()) << text.status();
  return *text;
}

// The compilation of an example job under `setting`, through estimate_costs (the pass before
// check_deadlock).
std::unique_ptr<StagedCompilation> BeforeDeadlockCheck(const std::string& job,
                                                       const ParallelSetting& setting) {
  auto staged = std::make_unique<StagedCompilation>(
      ExampleJob(job), ParallelOptions(setting, std::max(4, setting.Devices())));
  Status status = staged->RunThrough("estimate_costs");
  CHECK(status.ok()) << status;
  return staged;
}

// The first output of the task named `name`; -1 (and a failure) when there is none.
RegisterId FirstOutputOf(const TaskGraph& tasks, const std::string& name) {
  for (const TaskDef& task : tasks.tasks()) {
    if (task.name == name && !task.outputs.empty()) return task.outputs[0];
  }
  ADD_FAILURE() << "no task named " << name;
  return -1;
}

class ReplicatedPlans : public ::testing::TestWithParam<std::tuple<std::string, ParallelSetting>> {
};

// Every example job under every setting with data parallelism: rings of gradient buckets,
// tensor-parallel boxing inside a replica, partial sums whose zero parts only some replicas
// hold, pipeline stages, sinks on one device.
TEST_P(ReplicatedPlans, AreCheckedOnOneReplica) {
  const auto& [job, setting] = GetParam();
  std::unique_ptr<StagedCompilation> staged = BeforeDeadlockCheck(job, setting);
  Compilation& compilation = staged->compilation();
  ASSERT_TRUE(CheckDeadlockPass(compilation).ok());
  const DeadlockCheckReport& report = compilation.deadlock_check;
  EXPECT_EQ(report.whole_because, "");
  EXPECT_EQ(report.tasks, static_cast<int64_t>(compilation.tasks.tasks().size()));
  // One task per orbit of dp tasks, and the tail (the sinks and what gathers their values):
  // little more than a replica's share.
  EXPECT_LE(report.simulated_tasks * setting.dp, report.tasks * 11 / 10)
      << report.simulated_tasks << " of " << report.tasks;
}

std::vector<ParallelSetting> DataParallelSettings() {
  std::vector<ParallelSetting> settings;
  for (const ParallelSetting& setting : kParallelSettings) {
    if (setting.dp > 1) settings.push_back(setting);
  }
  return settings;
}

INSTANTIATE_TEST_SUITE_P(ExampleJobs, ReplicatedPlans,
                         ::testing::Combine(::testing::Values("mlp", "cnn", "resnet_tiny",
                                                              "transformer"),
                                            ::testing::ValuesIn(DataParallelSettings())),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" +
                                  std::string(std::get<1>(info.param).name);
                         });

TEST(DeadlockCheckReplicas, SimulatesAPlanWithOneReplicaWhole) {
  std::unique_ptr<StagedCompilation> staged = BeforeDeadlockCheck("mlp", {"tp2", 1, 2, 1});
  ASSERT_TRUE(CheckDeadlockPass(staged->compilation()).ok());
  const DeadlockCheckReport& report = staged->compilation().deadlock_check;
  EXPECT_EQ(report.whole_because, "one data-parallel replica");
  EXPECT_EQ(report.simulated_tasks, report.tasks);
}

// The task of fc2 on the second replica's device (device 1), and the register of x there.
struct SecondReplica {
  TaskId fc2 = -1;
  RegisterId x = -1;
};
SecondReplica SecondReplicaOf(const TaskGraph& tasks) {
  SecondReplica replica;
  replica.x = FirstOutputOf(tasks, "data@1");
  for (const TaskDef& task : tasks.tasks()) {
    if (task.name.rfind("fc2", 0) == 0 && task.device == 1 && task.logical_op >= 0) {
      replica.fc2 = task.id;
      break;
    }
  }
  return replica;
}

// A replica that waits for more than the others is folded with them into a stricter orbit
// graph, which still finishes here.
TEST(DeadlockCheckReplicas, FoldsAReplicaThatWaitsForMore) {
  std::unique_ptr<StagedCompilation> staged = BeforeDeadlockCheck("mlp", {"dp2", 2, 1, 1});
  Compilation& compilation = staged->compilation();
  const SecondReplica replica = SecondReplicaOf(compilation.tasks);
  ASSERT_GE(replica.x, 0);
  ASSERT_GE(replica.fc2, 0);
  compilation.tasks.AddReader(replica.x, replica.fc2, 0);  // fc2@1 also waits for x@1.
  ASSERT_TRUE(CheckDeadlockPass(compilation).ok());
  const DeadlockCheckReport& report = compilation.deadlock_check;
  EXPECT_EQ(report.whole_because, "");
  EXPECT_LT(report.simulated_tasks * 3, report.tasks * 2);
}

// A deadlock planted in the second replica only: the source there waits for fc2's output,
// which needs the source's. The orbit graph deadlocks, and the whole plan shows where.
TEST(DeadlockCheckReplicas, CatchesADeadlockPlantedInTheSecondReplicaOfAPlan) {
  std::unique_ptr<StagedCompilation> staged = BeforeDeadlockCheck("mlp", {"dp2", 2, 1, 1});
  Compilation& compilation = staged->compilation();
  const SecondReplica replica = SecondReplicaOf(compilation.tasks);
  ASSERT_GE(replica.fc2, 0);
  const TaskId source = compilation.tasks.register_at(replica.x).producer;
  compilation.tasks.AddReader(compilation.tasks.task(replica.fc2).outputs[0], source, 0);
  Status status = CheckDeadlockPass(compilation);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("actor 'data@1' (firing 0 of"));
  EXPECT_EQ(compilation.deadlock_check.whole_because, "the one-replica simulation deadlocked");
  EXPECT_EQ(compilation.deadlock_check.simulated_tasks, compilation.deadlock_check.tasks);
}

// Builds two replicas of: source -> f (y) -> sum (per step) -> z, where z reads y and the sum:
// with one slot of y, z holds it while the sum needs its next fill (slot_simulator_test.cc). The
// replicas exchange their sums (each z also reads the other replica's sum), so they are coupled
// as a ring's members are.
struct TwoReplicas {
  TaskGraph graph;
  std::vector<int> device_image = {1, 0};
};

TwoReplicas CoupledReplicas(int y_slots_replica0, int y_slots_replica1) {
  TwoReplicas replicas;
  TaskGraph& graph = replicas.graph;
  std::vector<RegisterId> sums;
  std::vector<TaskId> zs;
  for (int device = 0; device < 2; ++device) {
    auto add = [&](const std::string& name, proto::ActorKind kind, int64_t period, OpId op) {
      TaskDef task;
      task.name = name + "@" + std::to_string(device);
      task.kind = kind;
      task.device = device;
      task.period = period;
      task.firings = 4 / period;
      task.op_type = "identity";
      task.logical_op = op;
      return graph.AddTask(task);
    };
    auto write = [&](TaskId producer, const std::string& name, int64_t period, int slots) {
      TaskRegister reg;
      reg.name = name + "@" + std::to_string(device);
      reg.producer = producer;
      reg.device = device;
      reg.type = F32({4});
      reg.period = period;
      reg.slots = slots;
      reg.bytes_per_slot = 64;
      return graph.AddRegister(reg);
    };
    TaskId source = add("source", proto::ACTOR_KIND_SOURCE, 1, 0);
    TaskId f = add("f", proto::ACTOR_KIND_COMPUTE, 1, 1);
    TaskId sum = add("sum", proto::ACTOR_KIND_ACCUMULATE, 1, 2);
    TaskId z = add("z", proto::ACTOR_KIND_COMPUTE, 1, 3);
    graph.AddReader(write(source, "x", 1, 2), f, 0);
    const RegisterId y = write(f, "y", 1, device == 0 ? y_slots_replica0 : y_slots_replica1);
    graph.AddReader(y, sum, 0);
    sums.push_back(write(sum, "y_sum", 2, 1));
    graph.AddReader(sums.back(), z, 0);
    graph.AddReader(y, z, 0);
    zs.push_back(z);
  }
  graph.AddReader(sums[1], zs[0], 0);
  graph.AddReader(sums[0], zs[1], 0);
  CHECK(graph.Verify(4, true).ok()) << graph.Verify(4, true);
  return replicas;
}

TEST(ReplicaSymmetry, MapsEachReplicaOntoTheNextAndSimulatesOneTaskPerOrbit) {
  TwoReplicas replicas = CoupledReplicas(2, 2);
  std::string why_not;
  std::optional<TaskGraphSymmetry> symmetry =
      FindReplicaSymmetry(replicas.graph, replicas.device_image, 2, &why_not);
  ASSERT_TRUE(symmetry.has_value()) << why_not;
  EXPECT_EQ(symmetry->task_image[0], 4);  // source@0 -> source@1.
  EXPECT_EQ(symmetry->task_image[4], 0);
  std::optional<OrbitGraph> orbits = BuildOrbitGraph(replicas.graph, *symmetry, 2, &why_not);
  ASSERT_TRUE(orbits.has_value()) << why_not;
  EXPECT_EQ(orbits->graph.tasks().size(), 4u);
  EXPECT_EQ(orbits->orbit_size, (std::vector<int64_t>{2, 2, 2, 2}));
  SimulationResult whole = SlotSimulator(replicas.graph, 4).Run();
  SimulationResult one = SlotSimulator(orbits->graph, 4).Run();
  EXPECT_TRUE(whole.finished);
  EXPECT_TRUE(one.finished);
  EXPECT_EQ(one.firings * 2, whole.firings);
}

TEST(ReplicaSymmetry, FindsADeadlockOfEveryReplicaInTheOrbitGraph) {
  TwoReplicas replicas = CoupledReplicas(1, 1);
  std::string why_not;
  std::optional<TaskGraphSymmetry> symmetry =
      FindReplicaSymmetry(replicas.graph, replicas.device_image, 2, &why_not);
  ASSERT_TRUE(symmetry.has_value()) << why_not;
  std::optional<OrbitGraph> orbits = BuildOrbitGraph(replicas.graph, *symmetry, 2, &why_not);
  ASSERT_TRUE(orbits.has_value()) << why_not;
  EXPECT_FALSE(SlotSimulator(replicas.graph, 4).Run().finished);
  EXPECT_FALSE(SlotSimulator(orbits->graph, 4).Run().finished);
}

// Slots may differ between replicas: the orbit graph takes the fewest of each orbit, a plan at
// least as strict (docs/DECISIONS.md).
TEST(ReplicaSymmetry, TakesTheFewestSlotsOfEachOrbit) {
  TwoReplicas replicas = CoupledReplicas(2, 1);
  std::string why_not;
  std::optional<TaskGraphSymmetry> symmetry =
      FindReplicaSymmetry(replicas.graph, replicas.device_image, 2, &why_not);
  ASSERT_TRUE(symmetry.has_value()) << why_not;
  std::optional<OrbitGraph> orbits = BuildOrbitGraph(replicas.graph, *symmetry, 2, &why_not);
  ASSERT_TRUE(orbits.has_value()) << why_not;
  bool found = false;
  for (const TaskRegister& reg : orbits->graph.registers()) {
    if (replicas.graph.register_at(orbits->first_register[reg.id]).name == "y@0") {
      EXPECT_EQ(reg.slots, 1);
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

// What one replica's task reads and another's does not, the orbit graph's task reads: the
// stricter plan of docs/DECISIONS.md.
TEST(ReplicaSymmetry, HasTheOrbitReadWhatAnyOfItsTasksReads) {
  TwoReplicas replicas = CoupledReplicas(2, 2);
  // z@1 (task 7) also reads x@1 (register 3).
  replicas.graph.AddReader(3, 7, 0);
  std::string why_not;
  std::optional<TaskGraphSymmetry> symmetry =
      FindReplicaSymmetry(replicas.graph, replicas.device_image, 2, &why_not);
  ASSERT_TRUE(symmetry.has_value()) << why_not;
  EXPECT_EQ(symmetry->task_image[3], 7);  // z@0 -> z@1.
  std::optional<OrbitGraph> orbits = BuildOrbitGraph(replicas.graph, *symmetry, 2, &why_not);
  ASSERT_TRUE(orbits.has_value()) << why_not;
  ASSERT_EQ(orbits->graph.tasks().size(), 4u);
  std::vector<std::string> read_by_z;
  EXPECT_EQ(orbits->first_task[3], 3);
  for (RegisterId input : orbits->graph.task(3).inputs) {
    read_by_z.push_back(replicas.graph.register_at(orbits->first_register[input]).name);
  }
  EXPECT_THAT(read_by_z, ::testing::UnorderedElementsAre("x@0", "y@0", "y_sum@0", "y_sum@0"));
}

TEST(ReplicaSymmetry, VerifyAcceptsNoCorrespondenceAndRejectsAMapThatIsNotOneToOne) {
  TwoReplicas replicas = CoupledReplicas(2, 2);
  TaskGraphSymmetry none;
  none.task_image.assign(replicas.graph.tasks().size(), -1);
  none.register_image.assign(replicas.graph.registers().size(), -1);
  none.tail.assign(replicas.graph.tasks().size(), 0);
  EXPECT_TRUE(VerifySymmetry(replicas.graph, none, 2).ok());
  TaskGraphSymmetry two_to_one = none;
  two_to_one.task_image[0] = 4;
  two_to_one.task_image[1] = 4;
  EXPECT_THAT(VerifySymmetry(replicas.graph, two_to_one, 2).message(), HasSubstr("not one to one"));
  TaskGraphSymmetry itself = none;
  itself.task_image[0] = 0;  // A cycle of one task for two replicas.
  EXPECT_THAT(VerifySymmetry(replicas.graph, itself, 2).message(),
              HasSubstr("has 1 members for 2 replicas"));
}

// A compilation whose task graph is the coupled replicas, as data-parallel replicas on devices
// 0 and 1.
std::unique_ptr<Compilation> CompilationOf(TaskGraph graph, const JobFile& job_file,
                                           const CompileOptions& options,
                                           const OpRegistry& registry) {
  auto compilation = std::make_unique<Compilation>(job_file, options, registry);
  compilation->schedule = {true, 2, 1, 2};
  compilation->parallel.data = 2;
  compilation->devices.resize(2);
  placement::DeviceMesh mesh;
  mesh.devices = {0, 1};
  mesh.shape = {2, 1};
  compilation->meshes.push_back(mesh);
  compilation->tasks = std::move(graph);
  return compilation;
}

TEST(CheckDeadlockPass, CatchesADeadlockPlantedInTheSecondReplicaOnly) {
  JobFile job_file;
  CompileOptions options;
  OpRegistry registry = MakeStandardOps();
  std::unique_ptr<Compilation> compilation =
      CompilationOf(CoupledReplicas(2, 1).graph, job_file, options, registry);
  Status status = CheckDeadlockPass(*compilation);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("the plan would deadlock"));
  EXPECT_THAT(status.message(), HasSubstr("a free slot of register 'y@1' (1 slot)"));
  // The orbit graph (one slot of y) deadlocks; the whole plan decides.
  EXPECT_EQ(compilation->deadlock_check.whole_because, "the one-replica simulation deadlocked");
  EXPECT_EQ(compilation->deadlock_check.simulated_tasks, 8);
}

TEST(CheckDeadlockPass, CatchesADeadlockOfEveryReplicaAndNamesItWhole) {
  JobFile job_file;
  CompileOptions options;
  OpRegistry registry = MakeStandardOps();
  std::unique_ptr<Compilation> compilation =
      CompilationOf(CoupledReplicas(1, 1).graph, job_file, options, registry);
  Status status = CheckDeadlockPass(*compilation);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(compilation->deadlock_check.whole_because, "the one-replica simulation deadlocked");
  EXPECT_THAT(status.message(), HasSubstr("of 32 firings (2 steps) no actor can fire"));
  EXPECT_THAT(status.message(), HasSubstr("actor 'z@1' (firing 0 of 4)"));
}

TEST(CheckDeadlockPass, SimulatesIdenticalCoupledReplicasOnOne) {
  JobFile job_file;
  CompileOptions options;
  OpRegistry registry = MakeStandardOps();
  std::unique_ptr<Compilation> compilation =
      CompilationOf(CoupledReplicas(2, 2).graph, job_file, options, registry);
  ASSERT_TRUE(CheckDeadlockPass(*compilation).ok());
  EXPECT_EQ(compilation->deadlock_check.whole_because, "");
  EXPECT_EQ(compilation->deadlock_check.tasks, 8);
  EXPECT_EQ(compilation->deadlock_check.simulated_tasks, 4);
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
