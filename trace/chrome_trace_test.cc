// The Chrome trace file: what the writer produces passes the checker (and Python's JSON
// parser when there is one), reads back into the same model, and bad files are refused with
// the file named.
#include "trace/chrome_trace.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "base/file.h"
#include "trace/chrome_trace_check.h"
#include "trace/json.h"
#include "trace/testing/synthetic_traces.h"

namespace softwire {
namespace trace {
namespace {

TraceModel PipelineModel() {
  TraceLog log = testing::BarrierPipeline(3, 4, 2, {1500, 1000, 2500});
  log.info.window = StepWindow{0, 2};
  log.info.clock_offsets.push_back(NodeClockOffset{"node0", 0, 0});
  log.info.clock_offsets.push_back(NodeClockOffset{"node1", -1234, 56});
  StatusOr<TraceModel> model = BuildTraceModel(log);
  CHECK(model.ok()) << model.status();
  return std::move(*model);
}

TEST(ChromeTraceTest, AnExportedTracePassesEveryRuleOfTheChecker) {
  TraceModel model = PipelineModel();
  const std::string text = ExportChromeTrace(model);
  StatusOr<ChromeTraceCounts> counts = CheckChromeTrace(text);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->complete_events,
            static_cast<int64_t>(model.firings.size() + model.waits.size()));
  EXPECT_EQ(counts->flows, static_cast<int64_t>(model.flows.size()));
  EXPECT_EQ(counts->counter_events, static_cast<int64_t>(model.counters.size()));
  EXPECT_GT(counts->flows, 0);
  EXPECT_GT(counts->metadata_events, 0);
  EXPECT_NE(text.find("\"process_name\""), std::string::npos);
  EXPECT_NE(text.find("\"node0/sim:1\""), std::string::npos);
  EXPECT_NE(text.find("\"queue 0 (compute)\""), std::string::npos);
  EXPECT_NE(text.find("\"name\":\"slots h0\""), std::string::npos);
  EXPECT_NE(text.find("\"bp\":\"e\""), std::string::npos);
}

// A cpu device's queue tracks carry the names its kernel threads have in ps, top and gdb.
TEST(ChromeTraceTest, CpuQueueTracksNameTheDevicesThreads) {
  proto::Plan plan;
  proto::PlanDevice* device = plan.add_device();
  device->set_node("node0");
  device->set_name("cpu:0");
  device->set_kind(proto::DEVICE_KIND_CPU);
  PlanFacts facts = DescribePlan(plan);
  ASSERT_EQ(facts.devices.size(), 1u);
  EXPECT_EQ(facts.devices[0].kernel_threads, "sw:cpu0/k*");
  TraceModel model = PipelineModel();
  model.plan.devices[0].kernel_threads = facts.devices[0].kernel_threads;
  const std::string text = ExportChromeTrace(model);
  EXPECT_NE(text.find("\"queue 0 (compute, threads sw:cpu0/k*)\""), std::string::npos);
}

TEST(ChromeTraceTest, PythonsJsonParserAcceptsTheFileWhenPythonIsThere) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "/usr/bin/python3 is not installed";
  const std::string path = ::testing::TempDir() + "/chrome_trace_test_python.json";
  ASSERT_TRUE(WriteChromeTrace(path, PipelineModel()).ok());
  const std::string command = "timeout 20 /usr/bin/python3 -m json.tool " + path + " > /dev/null";
  EXPECT_EQ(std::system(command.c_str()), 0);
}

TEST(ChromeTraceTest, AFileReadsBackIntoTheModelItWasWrittenFrom) {
  TraceModel model = PipelineModel();
  model.plan.registers[1].dtype = "bfloat16";
  const std::string path = ::testing::TempDir() + "/chrome_trace_test_round_trip.json";
  ASSERT_TRUE(WriteChromeTrace(path, model).ok());
  StatusOr<TraceModel> read = ReadChromeTrace(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->plan.job_name, model.plan.job_name);
  EXPECT_EQ(read->plan.actors.size(), model.plan.actors.size());
  EXPECT_EQ(read->plan.registers[1].consumers, model.plan.registers[1].consumers);
  EXPECT_EQ(read->plan.registers[1].dtype, "bfloat16");
  EXPECT_EQ(read->plan.devices[2].planned_bytes, 4096);
  EXPECT_EQ(read->info.window.ToString(), "0:2");
  ASSERT_EQ(read->info.clock_offsets.size(), 2u);
  EXPECT_EQ(read->info.clock_offsets[1].offset_ns, -1234);
  EXPECT_EQ(read->info.clock_offsets[1].error_ns, 56);
  ASSERT_EQ(read->firings.size(), model.firings.size());
  for (size_t i = 0; i < model.firings.size(); ++i) {
    const FiringRecord& a = model.firings[i];
    const FiringRecord& b = read->firings[i];
    EXPECT_EQ(a.actor, b.actor);
    EXPECT_EQ(a.firing, b.firing);
    EXPECT_EQ(a.launch, b.launch);
    EXPECT_EQ(a.start, b.start);
    EXPECT_EQ(a.end, b.end);
    EXPECT_EQ(a.cause.kind, b.cause.kind);
    EXPECT_EQ(a.cause.actor, b.cause.actor);
    EXPECT_EQ(a.cause.register_id, b.cause.register_id);
    EXPECT_EQ(a.cause.sequence, b.cause.sequence);
  }
  ASSERT_EQ(read->waits.size(), model.waits.size());
  for (size_t i = 0; i < model.waits.size(); ++i) {
    EXPECT_EQ(read->waits[i].kind, model.waits[i].kind);
    EXPECT_EQ(read->waits[i].start, model.waits[i].start);
    EXPECT_EQ(read->waits[i].end, model.waits[i].end);
    EXPECT_EQ(read->waits[i].waiting_on, model.waits[i].waiting_on);
  }
  ASSERT_EQ(read->counters.size(), model.counters.size());
  for (size_t i = 0; i < model.counters.size(); ++i) {
    EXPECT_EQ(read->counters[i].register_id, model.counters[i].register_id);
    EXPECT_EQ(read->counters[i].time, model.counters[i].time);
    EXPECT_EQ(read->counters[i].occupied, model.counters[i].occupied);
  }
  ASSERT_EQ(read->flows.size(), model.flows.size());
  EXPECT_EQ(read->flows.back().sent, model.flows.back().sent);
  EXPECT_EQ(read->flows.back().consumer_firing, model.flows.back().consumer_firing);
}

TEST(ChromeTraceTest, SlicesThatAClockLetOverlapAreShortenedAndCounted) {
  TraceModel model = PipelineModel();
  // Two firings of stage0 now overlap by 300 ns on their queue.
  model.firings[1].start -= 300;
  model.firings[1].launch -= 300;
  ASSERT_EQ(model.firings[1].actor, model.firings[0].actor);
  const std::string text = ExportChromeTrace(model);
  EXPECT_TRUE(CheckChromeTrace(text).ok()) << CheckChromeTrace(text).status();
  EXPECT_NE(text.find("\"adjusted_slices\":1"), std::string::npos);
}

// A cpu device's sends let its strand go while their bytes travel: their slices, which overlap
// the kernels the strand runs meanwhile, lie on a track of their own and are not shortened.
TEST(ChromeTraceTest, ACpuDevicesSendsHaveATrackOfTheirOwn) {
  TraceModel model = PipelineModel();
  model.plan.devices[0].kind = "cpu";
  // Stage 1 becomes a send on device 0: its firings overlap stage 0's there (a pipeline).
  model.plan.actors[1].device = 0;
  model.plan.actors[1].kind = "send";
  const std::string text = ExportChromeTrace(model);
  EXPECT_TRUE(CheckChromeTrace(text).ok()) << CheckChromeTrace(text).status();
  EXPECT_NE(text.find("\"queue 0 sends in flight (bytes written by the data plane)\""),
            std::string::npos);
  EXPECT_NE(text.find("\"adjusted_slices\":0"), std::string::npos);
  // On one track they would have been shortened.
  model.plan.actors[1].kind = "compute";
  EXPECT_EQ(ExportChromeTrace(model).find("\"adjusted_slices\":0"), std::string::npos);
}

TEST(ChromeTraceTest, TheCheckerCatchesEveryBrokenRule) {
  struct Case {
    const char* what;
    const char* text;
  } cases[] = {
      {"not JSON", "{\"traceEvents\": ["},
      {"no traceEvents array", "{\"otherData\": {}}"},
      {"negative dur", R"({"traceEvents":[{"ph":"X","pid":1,"tid":0,"ts":1,"dur":-1}]})"},
      {"without a numeric dur", R"({"traceEvents":[{"ph":"X","pid":1,"tid":0,"ts":1}]})"},
      {"without nesting", R"({"traceEvents":[{"ph":"X","pid":1,"tid":0,"ts":0,"dur":10},
                                             {"ph":"X","pid":1,"tid":0,"ts":5,"dur":10}]})"},
      {"exactly one start and one end",
       R"({"traceEvents":[{"ph":"X","pid":1,"tid":0,"ts":0,"dur":10},
                          {"ph":"s","id":1,"pid":1,"tid":0,"ts":5}]})"},
      {"lies in no slice", R"({"traceEvents":[{"ph":"X","pid":1,"tid":0,"ts":0,"dur":10},
                                              {"ph":"X","pid":1,"tid":1,"ts":20,"dur":10},
                                              {"ph":"s","id":1,"pid":1,"tid":0,"ts":15},
                                              {"ph":"f","bp":"e","id":1,"pid":1,"tid":1,"ts":25}]})"},
      {"not bound to its enclosing slice",
       R"({"traceEvents":[{"ph":"f","id":1,"pid":1,"tid":1,"ts":25}]})"},
      {"counter without args", R"({"traceEvents":[{"ph":"C","pid":1,"ts":2,"name":"c"}]})"},
  };
  for (const Case& c : cases) {
    StatusOr<ChromeTraceCounts> counts = CheckChromeTrace(c.text);
    ASSERT_FALSE(counts.ok()) << c.what;
    EXPECT_NE(counts.status().message().find(c.what), std::string::npos)
        << c.what << ": " << counts.status();
  }
  // Nested slices on one thread are fine.
  EXPECT_TRUE(CheckChromeTrace(R"({"traceEvents":[{"ph":"X","pid":1,"tid":0,"ts":0,"dur":10},
                                                  {"ph":"X","pid":1,"tid":0,"ts":2,"dur":3}]})")
                  .ok());
}

TEST(ChromeTraceTest, BadFilesAreRefusedAsDataLossNamingTheFile) {
  const std::string good = ExportChromeTrace(PipelineModel());
  auto replaced = [&good](const std::string& from, const std::string& to) {
    std::string text = good;
    size_t at = text.find(from);
    CHECK(at != std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  struct Case {
    std::string text;
    std::string what;
  } cases[] = {
      {"not json at all", "line 1, column 2"},
      {"{\"traceEvents\": []}", "not a softwire trace"},
      {replaced("softwire-trace/1", "softwire-trace/9"), "not a softwire trace"},
      {replaced("\"args\":{\"actor\":0,", "\"args\":{\"actor\":99,"), "names actor 99"},
      {replaced("\"name\":\"slots h0\"", "\"name\":\"slots nowhere\""), "counter 'slots nowhere'"},
      {replaced("\"producer\":0,\"device\":0", "\"producer\":7,\"device\":0"), "bad producer"},
      {good.substr(0, good.size() / 2), "my.trace.json: line"},
  };
  for (const Case& c : cases) {
    StatusOr<TraceModel> model = ParseChromeTrace(c.text, "my.trace.json");
    ASSERT_FALSE(model.ok()) << c.what;
    EXPECT_EQ(model.status().code(), StatusCode::kDataLoss);
    EXPECT_EQ(model.status().message().rfind("my.trace.json: ", 0), 0u) << model.status();
    EXPECT_NE(model.status().message().find(c.what), std::string::npos)
        << c.what << ": " << model.status();
  }
  StatusOr<TraceModel> missing = ReadChromeTrace("/nonexistent/softwire.trace.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/softwire.trace.json"), std::string::npos);
}

}  // namespace
}  // namespace trace
}  // namespace softwire
