// The timeline's JSON (timeline_json.h) of a synthetic pipeline whose answers are known: every
// firing once, by start, flows and the critical path pointing at the firings sent.
#include "service/web/timeline_json.h"

#include <gtest/gtest.h>

#include "trace/testing/synthetic_traces.h"

namespace softwire {
namespace service {
namespace {

trace::TraceModel Pipeline() {
  StatusOr<trace::TraceModel> model =
      trace::BuildTraceModel(trace::testing::BarrierPipeline(3, 4, 5, {1000, 2000, 1500}));
  EXPECT_TRUE(model.ok()) << model.status();
  return *model;
}

TEST(TimelineJsonTest, EveryFiringIsSentOnceByStartWithItsActor) {
  const trace::TraceModel model = Pipeline();
  const nlohmann::json json = TimelineJson(model, trace::Summarize(model), {});
  const nlohmann::json& firings = json["firings"];
  ASSERT_EQ(firings["actor"].size(), model.firings.size());
  ASSERT_EQ(model.firings.size(), 3u * 4u * 5u);
  for (size_t i = 1; i < firings["start"].size(); ++i) {
    EXPECT_LE(firings["start"][i - 1].get<int64_t>(), firings["start"][i].get<int64_t>());
  }
  EXPECT_EQ(json["actors"].size(), 3u);
  EXPECT_EQ(json["actors"][1]["name"], "stage1");
  EXPECT_EQ(json["actors"][1]["color"], "#4e79a7");  // compute, as the SVG timeline draws it
  EXPECT_EQ(json["total_firings"], model.firings.size());
  EXPECT_GT(json["span_ns"].get<int64_t>(), 0);
}

TEST(TimelineJsonTest, FlowsAndTheCriticalPathIndexTheFiringsSent) {
  const trace::TraceModel model = Pipeline();
  const trace::TraceSummary summary = trace::Summarize(model);
  const nlohmann::json json = TimelineJson(model, summary, {});
  const size_t sent = json["firings"]["actor"].size();
  ASSERT_FALSE(json["flows"]["from"].empty());
  for (size_t k = 0; k < json["flows"]["from"].size(); ++k) {
    const size_t from = json["flows"]["from"][k], to = json["flows"]["to"][k];
    ASSERT_LT(from, sent);
    ASSERT_LT(to, sent);
    // Stage s feeds stage s + 1.
    EXPECT_EQ(json["firings"]["actor"][to].get<int>(),
              json["firings"]["actor"][from].get<int>() + 1);
  }
  EXPECT_EQ(json["critical_path"].size(), summary.critical_path.size());
}

TEST(TimelineJsonTest, ChosenStepsKeepOnlyTheirFirings) {
  const trace::TraceModel model = Pipeline();
  StatusOr<TimelineSteps> steps = ParseTimelineSteps("2:4");
  ASSERT_TRUE(steps.ok()) << steps.status();
  const nlohmann::json json = TimelineJson(model, trace::Summarize(model), *steps);
  EXPECT_EQ(json["firings"]["actor"].size(), 3u * 4u * 2u);
  for (const auto& step : json["firings"]["step"]) {
    EXPECT_GE(step.get<int64_t>(), 2);
    EXPECT_LT(step.get<int64_t>(), 4);
  }
  EXPECT_EQ(json["steps"]["first"], 2);
  EXPECT_EQ(json["steps"]["end"], 4);
}

TEST(TimelineJsonTest, BadStepRangesAreRefused) {
  EXPECT_FALSE(ParseTimelineSteps("4:2").ok());
  EXPECT_FALSE(ParseTimelineSteps("a:b").ok());
  EXPECT_FALSE(ParseTimelineSteps(":").ok());
  StatusOr<TimelineSteps> one = ParseTimelineSteps("3");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->first, 3);
  EXPECT_EQ(one->end, 4);
}

}  // namespace
}  // namespace service
}  // namespace softwire
