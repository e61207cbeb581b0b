// Node traces (node_traces.h): a trace crosses in chunks of at most ~1 MiB and comes back whole
// and in order; chunks out of order, a second trace and torn records are refused naming the
// node, as are times beyond any clock; the merge moves each node's events by its offset;
// AlignByFlows moves two nodes' clocks apart until no Ready between them runs backwards.
#include "service/node_traces.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "trace/testing/synthetic_traces.h"

namespace softwire {
namespace service {
namespace {

trace::TraceLog Recorded(int64_t events, int64_t origin) {
  trace::TraceLog log;
  log.info.origin_ns = origin;
  log.info.event_cap = 1000000;
  log.info.events_dropped = 3;
  log.info.outcome = "ok";
  for (int64_t i = 0; i < events; ++i) {
    log.events.push_back(trace::FiringEvent(static_cast<int32_t>(i % 7), i, origin + 10 * i,
                                            origin + 10 * i + 1, origin + 10 * i + 5,
                                            trace::CauseKind::kPreviousFiring, 0, -1, i - 1));
  }
  return log;
}

TEST(NodeTracesTest, ATraceCrossesInChunksOfAtMostAMebibyteAndComesBackWholeAndMoved) {
  const trace::TraceLog sent = Recorded(50000, 1000000);  // 2.8 MB of records.
  const std::vector<proto::NodeReport> chunks = TraceChunkReports(7, sent);
  ASSERT_EQ(chunks.size(), 3u);
  NodeTraceAssembler traces;
  for (const proto::NodeReport& chunk : chunks) {
    EXPECT_EQ(chunk.trace().run_id(), 7);
    EXPECT_LE(chunk.trace().events().size(), static_cast<size_t>(kTraceChunkBytes));
    EXPECT_FALSE(traces.complete("node1"));
    ASSERT_TRUE(traces.Add("node1", chunk.trace()).ok());
  }
  EXPECT_TRUE(traces.complete("node1"));
  EXPECT_EQ(traces.bytes(), static_cast<int64_t>(50000 * sizeof(trace::TraceEvent)));
  // node time + offset = server time.
  StatusOr<trace::TraceLog> merged =
      traces.Merge(proto::Plan(), trace::StepWindow(), {{"node1", {"node1", -400, 25}}});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->info.origin_ns, 1000000 - 400);
  EXPECT_EQ(merged->info.events_dropped, 3);
  EXPECT_EQ(merged->info.outcome, "ok");
  ASSERT_EQ(merged->info.clock_offsets.size(), 1u);
  EXPECT_EQ(merged->info.clock_offsets[0].error_ns, 25);
  ASSERT_EQ(merged->events.size(), sent.events.size());
  for (size_t i = 0; i < sent.events.size(); i += 997) {
    EXPECT_EQ(merged->events[i].index, sent.events[i].index);
    EXPECT_EQ(merged->events[i].actor, sent.events[i].actor);
    EXPECT_EQ(merged->events[i].start, sent.events[i].start - 400);
    EXPECT_EQ(merged->events[i].end, sent.events[i].end - 400);
  }
}

TEST(NodeTracesTest, AnEmptyTraceStillSaysHowTheRecordingWent) {
  trace::TraceLog failed = Recorded(0, 5);
  failed.info.outcome = "CANCELLED: released";
  const std::vector<proto::NodeReport> chunks = TraceChunkReports(1, failed);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_TRUE(chunks[0].trace().last());
  NodeTraceAssembler traces;
  ASSERT_TRUE(traces.Add("node0", chunks[0].trace()).ok());
  StatusOr<trace::TraceLog> merged =
      traces.Merge(proto::Plan(), trace::StepWindow(), {{"node0", {"node0", 0, 0}}});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->info.outcome, "node 'node0': CANCELLED: released");
}

TEST(NodeTracesTest, RefusesChunksOutOfOrderTornRecordsASecondTraceAndANodeWithoutOffset) {
  const std::vector<proto::NodeReport> chunks =
      TraceChunkReports(1, Recorded(100, 0), 10 * sizeof(trace::TraceEvent));
  ASSERT_EQ(chunks.size(), 10u);
  NodeTraceAssembler traces;
  Status skipped = traces.Add("node2", chunks[1].trace());
  EXPECT_EQ(skipped.code(), StatusCode::kDataLoss);
  EXPECT_NE(skipped.message().find("node 'node2'"), std::string::npos) << skipped;
  proto::TraceChunk torn = chunks[0].trace();
  torn.mutable_events()->pop_back();
  EXPECT_EQ(traces.Add("node2", torn).code(), StatusCode::kDataLoss);
  for (const proto::NodeReport& chunk : chunks)
    ASSERT_TRUE(traces.Add("node2", chunk.trace()).ok());
  EXPECT_EQ(traces.Add("node2", chunks[0].trace()).code(), StatusCode::kFailedPrecondition);
  StatusOr<trace::TraceLog> merged = traces.Merge(proto::Plan(), trace::StepWindow(), {});
  EXPECT_EQ(merged.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(merged.status().message().find("node 'node2'"), std::string::npos);
}

// Times a node's clock cannot show (the node_reports fuzz target's: moved by an offset, they
// overflowed) are refused naming the node, before anything of the chunk is kept.
TEST(NodeTracesTest, RefusesTimesBeyondAnyClock) {
  const std::vector<proto::NodeReport> far = TraceChunkReports(1, Recorded(3, int64_t{1} << 61));
  ASSERT_EQ(far.size(), 1u);
  NodeTraceAssembler traces;
  Status refused = traces.Add("node3", far[0].trace());
  EXPECT_EQ(refused.code(), StatusCode::kDataLoss);
  EXPECT_NE(refused.message().find("node 'node3'"), std::string::npos) << refused;
  EXPECT_TRUE(traces.empty() || traces.bytes() == 0);
  const std::vector<proto::NodeReport> near = TraceChunkReports(1, Recorded(3, int64_t{1} << 50));
  EXPECT_TRUE(traces.Add("node4", near[0].trace()).ok());
}

TEST(NodeTracesTest, AlignByFlowsMovesTwoNodesApartUntilNoReadyRunsBackwards) {
  // Two stages on two nodes; stage 1 starts as stage 0's firing ends. node1's clock reads 5 us
  // early: its firings start before the Readies that launched them left.
  trace::TraceLog log = trace::testing::BarrierPipeline(2, 4, 3, {1000, 2000});
  log.plan.devices[1].node = "node1";
  log.plan.devices[1].name = "node1/sim:1";
  for (trace::TraceEvent& event : log.events) {
    if (event.actor != 1) continue;
    event.launch -= 5000;
    event.start -= 5000;
    event.end -= 5000;
  }
  log.info.clock_offsets = {{"node0", 100, 10000}, {"node1", 200, 10000}};
  ASSERT_TRUE(AlignByFlows(&log).ok());
  EXPECT_EQ(log.info.clock_offsets[0].offset_ns, 100 - 2500);
  EXPECT_EQ(log.info.clock_offsets[1].offset_ns, 200 + 2500);
  StatusOr<trace::TraceModel> model = trace::BuildTraceModel(log);
  ASSERT_TRUE(model.ok()) << model.status();
  std::map<std::pair<int32_t, int64_t>, trace::TimeNs> started;
  for (const trace::FiringRecord& firing : model->firings) {
    started[{firing.actor, firing.firing}] = firing.start;
  }
  ASSERT_FALSE(model->flows.empty());
  for (const trace::FlowRecord& flow : model->flows) {
    EXPECT_GE(started.at({flow.consumer, flow.consumer_firing}), flow.sent);
  }
}

}  // namespace
}  // namespace service
}  // namespace softwire
