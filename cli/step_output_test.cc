#include "cli/step_output.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

namespace softwire {
namespace cli {
namespace {

runtime::StepResult Step(int64_t index, double loss) {
  runtime::StepResult step;
  step.step = index;
  step.loss = loss;
  step.outputs["loss"] = loss;
  step.outputs["accuracy"] = 0.5;
  step.seconds = 0.25;
  step.samples_per_second = 256;
  return step;
}

TEST(StepOutputTest, AutomaticIntervalsGiveAboutTwentyLinesOnRoundNumbers) {
  EXPECT_EQ(ProgressPrinter::AutoInterval(5), 1);
  EXPECT_EQ(ProgressPrinter::AutoInterval(40), 2);
  EXPECT_EQ(ProgressPrinter::AutoInterval(400), 20);
  EXPECT_EQ(ProgressPrinter::AutoInterval(1000), 50);
  EXPECT_EQ(ProgressPrinter::AutoInterval(30000), 2000);
}

TEST(StepOutputTest, ProgressPrintsTheFirstEveryNthAndTheLastStep) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  ASSERT_NE(out, nullptr);
  ProgressPrinter printer(out, /*total_steps=*/1000, /*every=*/0, "loss");
  for (int64_t i = 0; i < 1000; ++i) printer.OnStep(Step(i, 2.0));
  std::fclose(out);
  std::string lines(text, size);
  std::free(text);
  int count = 0;
  for (char c : lines) count += c == '\n';
  EXPECT_EQ(count, 21) << lines;  // Step 1, then every 50th.
  EXPECT_EQ(lines.find("step    1/1000  loss 2.000000  accuracy 0.500000  256 samples/s  0.25 s"),
            0u)
      << lines;
  EXPECT_NE(lines.find("step 1000/1000"), std::string::npos) << lines;
}

}  // namespace
}  // namespace cli
}  // namespace softwire
