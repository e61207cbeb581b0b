#include "runtime/host/step_results.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace softwire {
namespace runtime {
namespace {

StepResult Step(int64_t index, double loss) {
  StepResult step;
  step.step = index;
  step.loss = loss;
  step.outputs["loss"] = loss;
  step.outputs["accuracy"] = 0.5;
  step.seconds = 0.25;
  step.samples_per_second = 256;
  return step;
}

TEST(StepResultsTest, MetricsLinesAreOneJsonObjectWithFixedKeysThenEveryOutput) {
  EXPECT_EQ(MetricsJsonLine(Step(3, 1.5)),
            "{\"step\":3,\"loss\":1.5,\"samples_per_second\":256,\"seconds\":0.25,"
            "\"accuracy\":0.5}");
}

TEST(StepResultsTest, AnOutputNamedLikeAFixedKeyIsPrefixed) {
  StepResult step = Step(1, 2.0);
  step.outputs["loss"] = 7.0;  // Not the loss: the loss output has another name.
  step.outputs["seconds"] = 3.0;
  std::string line = MetricsJsonLine(step);
  EXPECT_NE(line.find("\"output:loss\":7"), std::string::npos) << line;
  EXPECT_NE(line.find("\"output:seconds\":3"), std::string::npos) << line;
}

TEST(StepResultsTest, NumbersJsonCannotHoldBecomeNullAndNamesAreEscaped) {
  StepResult step = Step(0, std::numeric_limits<double>::quiet_NaN());
  step.outputs.clear();
  step.outputs["say \"hi\""] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(MetricsJsonLine(step),
            "{\"step\":0,\"loss\":null,\"samples_per_second\":256,\"seconds\":0.25,"
            "\"say \\\"hi\\\"\":null}");
}

TEST(StepResultsTest, TheFirstStepIsTimedFromTheStartAndEveryOtherFromThePreviousStep) {
  proto::Plan plan;
  plan.mutable_schedule()->set_pieces_per_step(2);
  plan.mutable_schedule()->set_micro_batch_size(8);
  proto::PlanOutput* loss = plan.add_output();
  loss->set_name("xent");
  loss->set_is_loss(true);
  StepTimer timer(plan);
  EXPECT_EQ(timer.loss_name(), "xent");
  const auto start = std::chrono::steady_clock::time_point() + std::chrono::seconds(10);
  CollectedStep first;
  first.step = 0;
  first.completed_at = start + std::chrono::milliseconds(500);
  first.outputs["xent"] = 2.5;
  CollectedStep second = first;
  second.step = 1;
  second.completed_at = start + std::chrono::milliseconds(750);
  StepResult timed_first = timer.Time(first, start);
  StepResult timed_second = timer.Time(second, start);
  EXPECT_DOUBLE_EQ(timed_first.loss, 2.5);
  EXPECT_DOUBLE_EQ(timed_first.seconds, 0.5);
  EXPECT_DOUBLE_EQ(timed_first.samples_per_second, 32);
  EXPECT_DOUBLE_EQ(timed_second.seconds, 0.25);
  EXPECT_DOUBLE_EQ(timed_second.samples_per_second, 64);
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
