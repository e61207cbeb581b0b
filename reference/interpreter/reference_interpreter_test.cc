// The reference interpreter on small hand-built plans. Every expected number is computed here
// by plain loops from the same input values, not by the reference kernels.
#include "reference/interpreter/reference_interpreter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/npy.h"

namespace softwire {
namespace reference {
namespace {

using ::testing::HasSubstr;

// A fresh directory for the .npy files a plan reads, removed afterwards.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    std::string pattern = ::testing::TempDir() + "/softwire_reference_XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    const char* created = ::mkdtemp(buffer.data());
    EXPECT_NE(created, nullptr);
    path_ = created == nullptr ? ::testing::TempDir() : created;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Builds plans by name: registers first, then actors; Build() links producers and consumers.
class PlanMaker {
 public:
  PlanMaker(int64_t steps, int64_t pieces_per_step, int64_t micro_batch_size) {
    plan_.mutable_schedule()->set_steps(steps);
    plan_.mutable_schedule()->set_pieces_per_step(pieces_per_step);
    plan_.mutable_schedule()->set_micro_batch_size(micro_batch_size);
    proto::PlanDevice* device = plan_.add_device();
    device->set_node("node0");
    device->set_name("cpu:0");
    device->set_kind(proto::DEVICE_KIND_CPU);
  }

  void Register(const std::string& name, std::vector<int64_t> dims, int64_t period = 1,
                proto::DataType dtype = proto::DATA_TYPE_FLOAT32) {
    proto::RegisterDef* r = plan_.add_register_def();
    r->set_id(plan_.register_def_size() - 1);
    r->set_name(name);
    r->set_slots(1);
    r->set_period(period);
    r->mutable_tensor()->set_dtype(dtype);
    for (int64_t dim : dims) r->mutable_tensor()->add_dims(dim);
    ids_[name] = r->id();
  }

  proto::ActorDef* Actor(const std::string& name, proto::ActorKind kind,
                         const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs, int64_t period = 1,
                         const std::string& op_type = "") {
    proto::ActorDef* actor = plan_.add_actor();
    actor->set_id(plan_.actor_size() - 1);
    actor->set_name(name);
    actor->set_kind(kind);
    actor->set_period(period);
    actor->set_firings(plan_.schedule().steps() * plan_.schedule().pieces_per_step() / period);
    actor->mutable_kernel()->set_op_type(op_type);
    for (const std::string& input : inputs) {
      actor->add_input_register(ids_.at(input));
      *actor->mutable_kernel()->add_input() = plan_.register_def(ids_.at(input)).tensor();
    }
    for (const std::string& output : outputs) {
      actor->add_output_register(ids_.at(output));
      plan_.mutable_register_def(ids_.at(output))->set_producer(actor->id());
      *actor->mutable_kernel()->add_output() = plan_.register_def(ids_.at(output)).tensor();
    }
    return actor;
  }

  // Marks `actor` as the phase-1 consumer of `register_name` (set before Build).
  void Writer(const std::string& actor, const std::string& register_name) {
    writers_[register_name] = actor;
  }

  proto::Plan Build() {
    for (const proto::ActorDef& actor : plan_.actor()) {
      for (int64_t r : actor.input_register()) {
        proto::RegisterConsumer* consumer = plan_.mutable_register_def(r)->add_consumer();
        consumer->set_actor(actor.id());
        auto writer = writers_.find(plan_.register_def(r).name());
        consumer->set_phase(writer != writers_.end() && writer->second == actor.name() ? 1 : 0);
      }
    }
    return plan_;
  }

  proto::Plan* plan() { return &plan_; }

 private:
  proto::Plan plan_;
  std::map<std::string, int64_t> ids_;
  std::map<std::string, std::string> writers_;
};

void SetFloat(proto::KernelDef* kernel, const std::string& name, double value) {
  proto::Attribute* attribute = kernel->add_attr();
  attribute->set_name(name);
  attribute->set_float_(value);
}

void SetInts(proto::KernelDef* kernel, const std::string& name, std::vector<int64_t> values) {
  proto::Attribute* attribute = kernel->add_attr();
  attribute->set_name(name);
  attribute->mutable_ints();
  for (int64_t value : values) attribute->mutable_ints()->add_value(value);
}

void SetBool(proto::KernelDef* kernel, const std::string& name, bool value) {
  proto::Attribute* attribute = kernel->add_attr();
  attribute->set_name(name);
  attribute->set_bool_(value);
}

// Eight samples of three features, exact in float32.
const std::vector<float> kSamples = {1.0f,  2.0f, -1.0f, 0.5f, 0.0f,   1.5f,  -2.0f, 1.0f,
                                     0.25f, 3.0f, -0.5f, 1.0f, 0.0f,   1.0f,  2.0f,  1.25f,
                                     -1.0f, 0.5f, 2.0f,  2.0f, -0.75f, -1.0f, 0.5f,  0.0f};
const std::vector<float> kInitialWeight = {0.5f, -0.25f, 1.0f};

struct TrainingCase {
  double momentum = 0;
  int64_t steps = 2;
  bool adam = false;  // adam_update with learning_rate 0.01 instead of sgd_update.
};

// data -> x[2,3]; w_var -> w[3,1]; fc = matmul(x, w) -> y[2,1]; mean = reduce_mean(y) -> loss;
// report(loss); copy(loss) -> metric, report_copy(metric); seed = fill 0.5 -> dy[2,1] per step;
// grad = matmul(x, dy, transpose_a) -> dw[3,1]; acc(dw) -> g per step; update sgd(g, w);
// probe = reduce_mean(w) -> w_mean, report_w(w_mean).
proto::Plan TrainingPlan(const TrainingCase& test_case) {
  constexpr int64_t kPieces = 2;
  PlanMaker maker(test_case.steps, kPieces, /*micro_batch_size=*/2);
  maker.Register("x", {2, 3});
  maker.Register("w", {3, 1}, kPieces);
  maker.Register("y", {2, 1});
  maker.Register("loss", {});
  maker.Register("metric", {});
  maker.Register("dy", {2, 1}, kPieces);
  maker.Register("dw", {3, 1});
  maker.Register("g", {3, 1}, kPieces);
  maker.Register("w_mean", {});

  proto::ActorDef* data = maker.Actor("data", proto::ACTOR_KIND_SOURCE, {}, {"x"});
  proto::DataSource* source = data->mutable_source()->mutable_dataset();
  source->set_name("data");
  proto::SourceOutput* output = source->add_output();
  output->set_name("x");
  output->set_dtype(proto::DATA_TYPE_FLOAT32);
  output->add_sample_dims(3);
  source->mutable_npy()->add_path("x.npy");
  data->mutable_source()->set_sample_begin(0);
  data->mutable_source()->set_sample_end(2);

  proto::ActorDef* w_var = maker.Actor("w_var", proto::ACTOR_KIND_VARIABLE, {}, {"w"}, kPieces);
  w_var->mutable_variable()->set_variable("w");
  w_var->mutable_variable()->mutable_initializer()->set_npy_path("w.npy");
  w_var->mutable_variable()->mutable_logical_tensor()->set_dtype(proto::DATA_TYPE_FLOAT32);
  w_var->mutable_variable()->mutable_logical_tensor()->add_dims(3);
  w_var->mutable_variable()->mutable_logical_tensor()->add_dims(1);
  w_var->mutable_variable()->set_split_axis(-1);

  maker.Actor("fc", proto::ACTOR_KIND_COMPUTE, {"x", "w"}, {"y"}, 1, "matmul");
  maker.Actor("mean", proto::ACTOR_KIND_COMPUTE, {"y"}, {"loss"}, 1, "reduce_mean");
  maker.Actor("report", proto::ACTOR_KIND_SINK, {"loss"}, {})->mutable_sink()->set_output("loss");
  maker.Actor("copy", proto::ACTOR_KIND_COPY, {"loss"}, {"metric"}, 1, "copy");
  maker.Actor("report_copy", proto::ACTOR_KIND_SINK, {"metric"}, {})
      ->mutable_sink()
      ->set_output("metric");
  proto::ActorDef* seed =
      maker.Actor("seed", proto::ACTOR_KIND_COMPUTE, {}, {"dy"}, kPieces, "fill");
  SetInts(seed->mutable_kernel(), "shape", {2, 1});
  SetFloat(seed->mutable_kernel(), "value", 0.5);  // d mean / d y for 2 rows.
  proto::ActorDef* grad =
      maker.Actor("grad", proto::ACTOR_KIND_COMPUTE, {"x", "dy"}, {"dw"}, 1, "matmul");
  SetBool(grad->mutable_kernel(), "transpose_a", true);
  maker.Actor("acc", proto::ACTOR_KIND_ACCUMULATE, {"dw"}, {"g"}, 1, "accumulate");
  proto::ActorDef* update = maker.Actor("update", proto::ACTOR_KIND_UPDATE, {"g", "w"}, {}, kPieces,
                                        test_case.adam ? "adam_update" : "sgd_update");
  SetFloat(update->mutable_kernel(), "gradient_scale", 1.0 / kPieces);
  update->mutable_update()->set_variable("w");
  update->mutable_update()->set_gradient_scale(1.0 / kPieces);
  if (test_case.adam) {
    SetFloat(update->mutable_kernel(), "learning_rate", 0.01);
    update->mutable_update()->mutable_optimizer()->mutable_adam()->set_learning_rate(0.01);
  } else {
    SetFloat(update->mutable_kernel(), "learning_rate", 0.1);
    SetFloat(update->mutable_kernel(), "momentum", test_case.momentum);
    update->mutable_update()->mutable_optimizer()->mutable_sgd()->set_learning_rate(0.1);
    update->mutable_update()->mutable_optimizer()->mutable_sgd()->set_momentum(test_case.momentum);
  }
  maker.Writer("update", "w");
  // Reads w, listed after the update: it must see each step's value from before the update.
  maker.Actor("probe", proto::ACTOR_KIND_COMPUTE, {"w"}, {"w_mean"}, 1, "reduce_mean");
  maker.Actor("report_w", proto::ACTOR_KIND_SINK, {"w_mean"}, {})
      ->mutable_sink()
      ->set_output("w_mean");

  proto::Plan plan = maker.Build();
  proto::PlanOutput* loss = plan.add_output();
  loss->set_name("loss");
  loss->set_is_loss(true);
  loss->set_sink_actor(4);
  proto::PlanOutput* metric = plan.add_output();
  metric->set_name("metric");
  metric->set_sink_actor(6);
  proto::PlanOutput* w_mean = plan.add_output();
  w_mean->set_name("w_mean");
  w_mean->set_sink_actor(12);
  proto::PlanVariable* variable = plan.add_variable();
  variable->set_name("w");
  *variable->mutable_tensor() = w_var->variable().logical_tensor();
  proto::VariablePart* part = variable->add_part();
  part->set_register_id(1);
  part->set_split_axis(-1);
  return plan;
}

// Options whose data root is `directory`.
ReferenceOptions Rooted(const std::string& directory) {
  ReferenceOptions options;
  options.data_root = directory;
  return options;
}

void WriteInputs(const std::string& directory) {
  ASSERT_TRUE(WriteNpy(directory + "/x.npy", DType::kFloat32, Shape{8, 3}, kSamples.data()).ok());
  ASSERT_TRUE(
      WriteNpy(directory + "/w.npy", DType::kFloat32, Shape{3, 1}, kInitialWeight.data()).ok());
}

// The same training, by hand: loss_p = mean over rows of x.w; dw_p = 0.5 * sum of the rows;
// g = dw_0 + dw_1, scaled by 1/2. SGD: v = momentum v + g; w -= 0.1 v. Adam (docs/OPS.md)
// at step t = step + 1 with learning rate 0.01 and the default betas and epsilon.
struct ExpectedTraining {
  std::vector<double> losses;
  std::vector<double> weight_means;  // Of the weight each step read.
  std::vector<double> weight;
};

ExpectedTraining TrainByHand(const TrainingCase& test_case) {
  ExpectedTraining expected;
  std::vector<double> w(kInitialWeight.begin(), kInitialWeight.end());
  std::vector<double> velocity(3, 0.0);
  std::vector<double> m(3, 0.0), v(3, 0.0);
  for (int64_t step = 0; step < test_case.steps; ++step) {
    double loss_sum = 0;
    std::vector<double> g(3, 0.0);
    for (int64_t piece = 2 * step; piece < 2 * step + 2; ++piece) {
      double loss = 0;
      for (int64_t row = 2 * piece; row < 2 * piece + 2; ++row) {
        for (int k = 0; k < 3; ++k) {
          loss += kSamples[static_cast<size_t>(row * 3 + k)] * w[static_cast<size_t>(k)] / 2;
          g[static_cast<size_t>(k)] += 0.5 * kSamples[static_cast<size_t>(row * 3 + k)];
        }
      }
      loss_sum += loss;
    }
    expected.losses.push_back(loss_sum / 2);
    expected.weight_means.push_back((w[0] + w[1] + w[2]) / 3);
    const double t = static_cast<double>(step + 1);
    for (int k = 0; k < 3; ++k) {
      const double scaled = g[k] / 2;
      if (test_case.adam) {
        m[k] = 0.9 * m[k] + 0.1 * scaled;
        v[k] = 0.999 * v[k] + 0.001 * scaled * scaled;
        const double m_hat = m[k] / (1 - std::pow(0.9, t));
        const double v_hat = v[k] / (1 - std::pow(0.999, t));
        w[k] -= 0.01 * m_hat / (std::sqrt(v_hat) + 1e-8);
      } else {
        velocity[k] = test_case.momentum * velocity[k] + scaled;
        w[k] -= 0.1 * velocity[k];
      }
    }
  }
  expected.weight = w;
  return expected;
}

void ExpectTrainingMatches(const TrainingCase& test_case, const ReferenceOptions& options) {
  TemporaryDirectory directory;
  WriteInputs(directory.path());
  ReferenceOptions rooted = options;
  rooted.data_root = directory.path();
  StatusOr<ReferenceResult> result = RunReferencePlan(TrainingPlan(test_case), rooted);
  ASSERT_TRUE(result.ok()) << result.status();
  TrainingCase run_case = test_case;
  if (options.steps >= 0) run_case.steps = options.steps;
  const ExpectedTraining expected = TrainByHand(run_case);
  ASSERT_EQ(result->steps.size(), expected.losses.size());
  for (size_t s = 0; s < expected.losses.size(); ++s) {
    EXPECT_EQ(result->steps[s].step, static_cast<int64_t>(s));
    EXPECT_NEAR(result->steps[s].loss, expected.losses[s], 1e-12) << "step " << s;
    EXPECT_NEAR(result->steps[s].outputs.at("loss"), expected.losses[s], 1e-12);
    EXPECT_NEAR(result->steps[s].outputs.at("metric"), expected.losses[s], 1e-12);
    EXPECT_NEAR(result->steps[s].outputs.at("w_mean"), expected.weight_means[s], 1e-12);
  }
  const ReferenceTensor& w = result->variables.at("w");
  EXPECT_EQ(w.shape, (Shape{3, 1}));
  ASSERT_EQ(w.values.size(), 3u);
  for (size_t k = 0; k < 3; ++k) EXPECT_NEAR(w.values[k], expected.weight[k], 1e-12) << k;
}

TEST(ReferenceInterpreterTest, TrainsALinearModelWithTwoAccumulatedPiecesPerStep) {
  ExpectTrainingMatches(TrainingCase{0.0, 2}, ReferenceOptions{});
}

TEST(ReferenceInterpreterTest, KeepsMomentumStateAcrossSteps) {
  ExpectTrainingMatches(TrainingCase{0.9, 2}, ReferenceOptions{});
}

TEST(ReferenceInterpreterTest, CountsAdamStepsFromOne) {
  ExpectTrainingMatches(TrainingCase{0.0, 2, /*adam=*/true}, ReferenceOptions{});
}

TEST(ReferenceInterpreterTest, RunsFewerStepsWhenAsked) {
  ReferenceOptions options;
  options.steps = 1;
  ExpectTrainingMatches(TrainingCase{0.0, 2}, options);
}

TEST(ReferenceInterpreterTest, RefusesMoreStepsThanThePlanHas) {
  TemporaryDirectory directory;
  WriteInputs(directory.path());
  ReferenceOptions options;
  options.steps = 3;
  options.data_root = directory.path();
  StatusOr<ReferenceResult> result = RunReferencePlan(TrainingPlan(TrainingCase{}), options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("3 steps asked, but the plan has 2"));
}

TEST(ReferenceInterpreterTest, StitchesAVariableFromItsParts) {
  TemporaryDirectory directory;
  const std::vector<float> whole = {1, 2, 3, 4, 5, 6};  // [3, 2]
  ASSERT_TRUE(
      WriteNpy(directory.path() + "/v.npy", DType::kFloat32, Shape{3, 2}, whole.data()).ok());
  PlanMaker maker(1, 1, 1);
  maker.Register("top", {2, 2}, 1);
  maker.Register("bottom", {1, 2}, 1);
  proto::PlanVariable variable;
  variable.set_name("v");
  variable.mutable_tensor()->set_dtype(proto::DATA_TYPE_FLOAT32);
  variable.mutable_tensor()->add_dims(3);
  variable.mutable_tensor()->add_dims(2);
  const std::vector<std::pair<int64_t, int64_t>> rows = {{0, 2}, {2, 3}};
  for (int i = 0; i < 2; ++i) {
    proto::ActorDef* actor = maker.Actor(i == 0 ? "v_top" : "v_bottom", proto::ACTOR_KIND_VARIABLE,
                                         {}, {i == 0 ? "top" : "bottom"});
    proto::VariableActorDef* settings = actor->mutable_variable();
    settings->set_variable("v");
    settings->mutable_initializer()->set_npy_path("v.npy");
    *settings->mutable_logical_tensor() = variable.tensor();
    settings->set_split_axis(0);
    settings->set_split_begin(rows[i].first);
    settings->set_split_end(rows[i].second);
    proto::VariablePart* part = variable.add_part();
    part->set_register_id(i);
    part->set_split_axis(0);
    part->set_split_begin(rows[i].first);
    part->set_split_end(rows[i].second);
  }
  proto::Plan plan = maker.Build();
  *plan.add_variable() = variable;
  StatusOr<ReferenceResult> result = RunReferencePlan(plan, Rooted(directory.path()));
  ASSERT_TRUE(result.ok()) << result.status();
  const ReferenceTensor& v = result->variables.at("v");
  EXPECT_EQ(v.shape, (Shape{3, 2}));
  EXPECT_EQ(v.values, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  ASSERT_EQ(result->steps.size(), 1u);
  EXPECT_EQ(result->steps[0].loss, 0.0);  // No loss output.
}

TEST(ReferenceInterpreterTest, FailsNamingTheActorWhoseKernelIsUnknown) {
  TemporaryDirectory directory;
  WriteInputs(directory.path());
  proto::Plan plan = TrainingPlan(TrainingCase{});
  plan.mutable_actor(3)->mutable_kernel()->set_op_type("no_such_op");
  StatusOr<ReferenceResult> result = RunReferencePlan(plan, Rooted(directory.path()));
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("actor 'mean'"));
  EXPECT_THAT(result.status().message(), HasSubstr("no_such_op"));
}

TEST(ReferenceInterpreterTest, RefusesSendAndRecvActorsAsUnimplemented) {
  TemporaryDirectory directory;
  WriteInputs(directory.path());
  proto::Plan plan = TrainingPlan(TrainingCase{});
  plan.mutable_actor(5)->set_kind(proto::ACTOR_KIND_SEND);
  StatusOr<ReferenceResult> result = RunReferencePlan(plan, Rooted(directory.path()));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(result.status().message(), HasSubstr("actor 'copy'"));
}

TEST(ReferenceInterpreterTest, FailsNamingTheSourceWhenItsDataIsMissing) {
  TemporaryDirectory directory;  // No x.npy written.
  StatusOr<ReferenceResult> result =
      RunReferencePlan(TrainingPlan(TrainingCase{}), Rooted(directory.path()));
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("actor 'data'"));
  const std::string resolved =
      std::filesystem::path(directory.path() + "/x.npy").lexically_normal().string();
  EXPECT_THAT(result.status().message(), HasSubstr("cannot open '" + resolved + "'"));
}

TEST(ReferenceInterpreterTest, FailsNamingTheSourceWhenThereIsNoDataRoot) {
  StatusOr<ReferenceResult> result = RunReferencePlan(TrainingPlan(TrainingCase{}), {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(result.status().message(), HasSubstr("actor 'data'"));
  EXPECT_THAT(result.status().message(), HasSubstr("'x.npy' is relative and no data root"));
}

}  // namespace
}  // namespace reference
}  // namespace softwire
