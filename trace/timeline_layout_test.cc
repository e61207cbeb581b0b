// No text of the timeline overlaps another or leaves the picture, at any number of devices and
// steps: the boxes the painter placed every text by (timeline_text.h), checked pair by pair on
// synthetic pipelines of 1, 4, 8 and 32 devices over 1, 3 and 50 steps, at several widths.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trace/testing/synthetic_traces.h"
#include "trace/timeline_render.h"

namespace softwire {
namespace trace {
namespace {

TraceModel Pipeline(int devices, int64_t steps) {
  std::vector<TimeNs> stage_ns;
  for (int s = 0; s < devices; ++s) stage_ns.push_back(1000 + 500 * (s % 3));
  StatusOr<TraceModel> model =
      BuildTraceModel(testing::BarrierPipeline(devices, /*pieces_per_step=*/4, steps, stage_ns));
  CHECK(model.ok()) << model.status();
  return std::move(*model);
}

// Every problem with the boxes: overlaps, boxes outside the picture.
std::vector<std::string> LayoutProblems(const std::vector<TextBox>& boxes, int width, int height) {
  std::vector<std::string> problems;
  for (size_t i = 0; i < boxes.size(); ++i) {
    const TextBox& a = boxes[i];
    if (a.x < 0 || a.y < 0 || a.x + a.width > width || a.y + a.height > height) {
      problems.push_back("outside the picture: '" + a.text + "'");
    }
    for (size_t j = i + 1; j < boxes.size(); ++j) {
      if (Overlaps(a, boxes[j])) {
        problems.push_back("'" + a.text + "' over '" + boxes[j].text + "'");
      }
    }
  }
  return problems;
}

int CountEnding(const std::vector<TextBox>& boxes, const std::string& ending) {
  int count = 0;
  for (const TextBox& box : boxes) {
    if (box.text.size() >= ending.size() &&
        box.text.compare(box.text.size() - ending.size(), ending.size(), ending) == 0) {
      ++count;
    }
  }
  return count;
}

TEST(TimelineLayoutTest, NoTextOverlapsAtAnyNumberOfDevicesAndSteps) {
  for (int devices : {1, 4, 8, 32}) {
    for (int64_t steps : {1, 3, 50}) {
      TraceModel model = Pipeline(devices, steps);
      TraceSummary summary = Summarize(model);
      for (int width : {1200, 700, 400}) {
        SCOPED_TRACE(std::to_string(devices) + " devices, " + std::to_string(steps) +
                     " steps, width " + std::to_string(width));
        TimelineOptions options;
        options.width = width;
        int picture_width = 0;
        int picture_height = 0;
        const std::vector<TextBox> boxes =
            TimelineTextBoxes(model, &summary, options, &picture_width, &picture_height);
        EXPECT_GE(picture_width, width);
        const std::vector<std::string> problems =
            LayoutProblems(boxes, picture_width, picture_height);
        EXPECT_TRUE(problems.empty()) << problems.size() << " problems, first: " << problems[0];
        // Every row still says its busy share, and some step is named.
        EXPECT_EQ(CountEnding(boxes, "% busy"), devices);
        bool step_named = false;
        for (const TextBox& box : boxes) step_named |= box.text.rfind("step", 0) == 0;
        EXPECT_TRUE(step_named);
      }
    }
  }
}

TEST(TimelineLayoutTest, LongDeviceNamesAreCutToTheLabelColumnKeepingTheirEnd) {
  TraceModel model = Pipeline(8, 3);
  for (size_t d = 0; d < model.plan.devices.size(); ++d) {
    model.plan.devices[d].name = "node" + std::to_string(d) +
                                 ".a-rather-long-host-name.example.org/cuda:" + std::to_string(d);
  }
  TraceSummary summary = Summarize(model);
  TimelineOptions options;
  options.width = 700;
  int width = 0;
  int height = 0;
  const std::vector<TextBox> boxes = TimelineTextBoxes(model, &summary, options, &width, &height);
  const std::vector<std::string> problems = LayoutProblems(boxes, width, height);
  EXPECT_TRUE(problems.empty()) << problems[0];
  int cut = 0;
  for (const TextBox& box : boxes) {
    if (box.text.rfind("...", 0) == 0 && box.text.find("/cuda:") != std::string::npos) ++cut;
  }
  EXPECT_EQ(cut, 8) << "each long name cut at its front, its device number kept";
}

TEST(TimelineLayoutTest, ThinRowsShrinkTheirLabelsSoTheyStillDoNotOverlap) {
  TraceModel model = Pipeline(32, 3);
  TraceSummary summary = Summarize(model);
  TimelineOptions options;
  options.row_height = 9;
  int width = 0;
  int height = 0;
  const std::vector<TextBox> boxes = TimelineTextBoxes(model, &summary, options, &width, &height);
  const std::vector<std::string> problems = LayoutProblems(boxes, width, height);
  EXPECT_TRUE(problems.empty()) << problems[0];
  EXPECT_EQ(CountEnding(boxes, "% busy"), 32);
}

}  // namespace
}  // namespace trace
}  // namespace softwire
