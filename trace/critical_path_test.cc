// Critical paths of small hand-made traces whose answer is known: a free-running pipeline with
// one slow stage, two parallel branches of different lengths, a firing held up by its queue,
// and a window that cuts the path.
#include "trace/critical_path.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace softwire {
namespace trace {
namespace {

TraceModel Model(const TraceLog& log) {
  StatusOr<TraceModel> model = BuildTraceModel(log);
  CHECK(model.ok()) << model.status();
  return std::move(*model);
}

// Adds a device and a compute actor on it; returns the actor's id.
int32_t AddActor(PlanFacts* plan, const std::string& name, int64_t firings) {
  DeviceFacts device;
  device.name = "node0/sim:" + std::to_string(plan->devices.size());
  device.node = "node0";
  device.kind = "sim";
  plan->devices.push_back(device);
  ActorFacts actor;
  actor.name = name;
  actor.kind = "compute";
  actor.device = static_cast<int32_t>(plan->devices.size()) - 1;
  actor.stage = actor.device;
  actor.firings = firings;
  plan->actors.push_back(actor);
  return static_cast<int32_t>(plan->actors.size()) - 1;
}

// Adds register `name` from `producer` to `consumers`; returns its id.
int32_t AddRegister(PlanFacts* plan, const std::string& name, int32_t producer,
                    std::vector<int32_t> consumers, int32_t slots) {
  RegisterFacts reg;
  reg.name = name;
  reg.producer = producer;
  reg.device = plan->actors[static_cast<size_t>(producer)].device;
  reg.slots = slots;
  reg.bytes_per_slot = 64;
  reg.consumers = consumers;
  const int32_t id = static_cast<int32_t>(plan->registers.size());
  plan->registers.push_back(reg);
  plan->actors[static_cast<size_t>(producer)].outputs.push_back(id);
  for (int32_t consumer : consumers)
    plan->actors[static_cast<size_t>(consumer)].inputs.push_back(id);
  return id;
}

TraceLog EmptyLog(const std::string& job) {
  TraceLog log;
  log.plan.job_name = job;
  log.plan.steps = 1;
  log.info.engine = "synthetic";
  log.info.clock = "virtual";
  log.info.event_cap = 1 << 20;
  return log;
}

// A chain of stages, one per device, running `pieces` pieces without a barrier and with a slot
// per piece (no stage ever waits for a slot): piece j of stage s starts when stage s-1 finished
// it and stage s finished piece j-1, and records whichever came last as its cause.
TraceLog FreeRunningChain(const std::vector<TimeNs>& stage_ns, int64_t pieces) {
  TraceLog log = EmptyLog("free_running_chain");
  log.plan.pieces_per_step = pieces;
  const int stages = static_cast<int>(stage_ns.size());
  for (int s = 0; s < stages; ++s) AddActor(&log.plan, "stage" + std::to_string(s), pieces);
  for (int s = 0; s + 1 < stages; ++s) {
    AddRegister(&log.plan, "h" + std::to_string(s), s, {s + 1}, static_cast<int32_t>(pieces));
  }
  std::vector<std::vector<TimeNs>> end(stages, std::vector<TimeNs>(pieces, 0));
  for (int64_t piece = 0; piece < pieces; ++piece) {
    for (int s = 0; s < stages; ++s) {
      const TimeNs input = s > 0 ? end[s - 1][piece] : 0;
      const TimeNs previous = piece > 0 ? end[s][piece - 1] : 0;
      const TimeNs start = std::max(input, previous);
      end[s][piece] = start + stage_ns[static_cast<size_t>(s)];
      if (s == 0 && piece == 0) {
        log.events.push_back(
            FiringEvent(s, piece, start, start, end[s][piece], CauseKind::kStart, -1, -1, -1));
      } else if (s > 0 && input >= previous) {
        log.events.push_back(FiringEvent(s, piece, start, start, end[s][piece], CauseKind::kInput,
                                         s - 1, s - 1, piece));
      } else {
        log.events.push_back(FiringEvent(s, piece, start, start, end[s][piece],
                                         CauseKind::kPreviousFiring, s, -1, piece - 1));
      }
    }
  }
  return log;
}

// (actor, firing) of each firing on the path, earliest first.
std::vector<std::pair<int32_t, int64_t>> Firings(const TraceModel& model,
                                                 const CriticalPath& path) {
  std::vector<std::pair<int32_t, int64_t>> out;
  for (const PathFiring& on_path : path.firings) {
    const FiringRecord& firing = model.firings[on_path.firing];
    out.emplace_back(firing.actor, firing.firing);
  }
  return out;
}

TEST(CriticalPathTest, APipelineWithOneSlowStageRunsThroughEveryFiringOfThatStage) {
  // stage1 takes 4 us, the others 1 us: stage0 piece 0, then stage1 pieces 0..7 back to back,
  // then stage2 piece 7. Nothing waits on the path, so it is as long as the trace.
  TraceModel model = Model(FreeRunningChain({1000, 4000, 1000}, 8));
  CriticalPath path = FindCriticalPath(model, model.span_begin(), model.span_end());
  std::vector<std::pair<int32_t, int64_t>> expected = {{0, 0}};
  for (int64_t piece = 0; piece < 8; ++piece) expected.emplace_back(1, piece);
  expected.emplace_back(2, 7);
  EXPECT_EQ(Firings(model, path), expected);
  EXPECT_EQ(path.firings.front().link, PathLink::kFirst);
  EXPECT_EQ(path.firings[1].link, PathLink::kInput);
  for (size_t i = 2; i < 9; ++i) EXPECT_EQ(path.firings[i].link, PathLink::kPrevious) << i;
  EXPECT_EQ(path.firings.back().link, PathLink::kInput);
  EXPECT_EQ(path.length_ns(), 34000);
  EXPECT_EQ(path.busy_ns, 34000);
  EXPECT_EQ(path.wait_ns, 0);
  ASSERT_EQ(path.actors.size(), 3u);
  EXPECT_EQ(path.actors[0].actor, 1) << "the slow stage has most of the path";
  EXPECT_EQ(path.actors[0].firings, 8);
  EXPECT_DOUBLE_EQ(path.actors[0].share, 32000.0 / 34000);
  EXPECT_DOUBLE_EQ(path.actors[1].share, 1000.0 / 34000);
}

TEST(CriticalPathTest, AnEvenPipelineRunsDownTheFirstStageAndAcrossTheLastPiece) {
  // Equal stages: stage0 pieces 0..3 (each waits only for its own previous firing), then the
  // last piece through stages 1 and 2.
  TraceModel model = Model(FreeRunningChain({1000, 1000, 1000}, 4));
  CriticalPath path = FindCriticalPath(model, model.span_begin(), model.span_end());
  std::vector<std::pair<int32_t, int64_t>> expected = {{0, 0}, {0, 1}, {0, 2},
                                                       {0, 3}, {1, 3}, {2, 3}};
  EXPECT_EQ(Firings(model, path), expected);
  EXPECT_EQ(path.length_ns(), 6000);
}

// A source feeding two branches on their own devices, joined by one actor. `x_ns` and `y_ns`
// are the branches' times; the join records as its cause the branch whose fill arrived last;
// every message takes 100 ns.
TraceModel TwoBranches(TimeNs x_ns, TimeNs y_ns) {
  TraceLog log = EmptyLog("two_branches");
  const int32_t source = AddActor(&log.plan, "source", 1);
  const int32_t x = AddActor(&log.plan, "x", 1);
  const int32_t y = AddActor(&log.plan, "y", 1);
  const int32_t join = AddActor(&log.plan, "join", 1);
  const int32_t fed = AddRegister(&log.plan, "fed", source, {x, y}, 1);
  const int32_t x_out = AddRegister(&log.plan, "x_out", x, {join}, 1);
  const int32_t y_out = AddRegister(&log.plan, "y_out", y, {join}, 1);
  const TimeNs latency = 100;
  const TimeNs x_end = 1000 + latency + x_ns;
  const TimeNs y_end = 1000 + latency + y_ns;
  const TimeNs join_start = std::max(x_end, y_end) + latency;
  log.events = {FiringEvent(source, 0, 0, 0, 1000, CauseKind::kStart, -1, -1, -1),
                FiringEvent(x, 0, 1100, 1100, x_end, CauseKind::kInput, source, fed, 0),
                FiringEvent(y, 0, 1100, 1100, y_end, CauseKind::kInput, source, fed, 0),
                x_end >= y_end ? FiringEvent(join, 0, join_start, join_start, join_start + 1000,
                                             CauseKind::kInput, x, x_out, 0)
                               : FiringEvent(join, 0, join_start, join_start, join_start + 1000,
                                             CauseKind::kInput, y, y_out, 0)};
  return Model(log);
}

TEST(CriticalPathTest, OfTwoParallelBranchesTheLongerOneIsOnThePath) {
  TraceModel model = TwoBranches(/*x_ns=*/5000, /*y_ns=*/1000);
  CriticalPath path = FindCriticalPath(model, model.span_begin(), model.span_end());
  std::vector<std::pair<int32_t, int64_t>> expected = {{0, 0}, {1, 0}, {3, 0}};
  EXPECT_EQ(Firings(model, path), expected);
  // source 1000 + 100 + x 5000 + 100 + join 1000.
  EXPECT_EQ(path.length_ns(), 7200);
  EXPECT_EQ(path.busy_ns, 7000);
  EXPECT_EQ(path.wait_ns, 200) << "two messages on the path, 100 ns each";
  EXPECT_EQ(path.firings[1].wait_ns, 100);
  EXPECT_EQ(path.actors.front().actor, 1);
  EXPECT_DOUBLE_EQ(path.actors.front().share, 5000.0 / 7200);

  TraceModel swapped = TwoBranches(/*x_ns=*/1000, /*y_ns=*/5000);
  CriticalPath other = FindCriticalPath(swapped, swapped.span_begin(), swapped.span_end());
  expected = {{0, 0}, {2, 0}, {3, 0}};
  EXPECT_EQ(Firings(swapped, other), expected);
}

TEST(CriticalPathTest, AFiringThatWaitedForItsQueueFollowsTheFiringThatHeldIt) {
  // Two actors on one device queue: b could launch at 2 us but the queue ran a until 10 us.
  TraceLog log = EmptyLog("shared_queue");
  const int32_t a = AddActor(&log.plan, "a", 1);
  const int32_t b = AddActor(&log.plan, "b", 1);
  log.plan.devices.pop_back();
  log.plan.actors[static_cast<size_t>(b)].device = 0;
  log.events = {FiringEvent(a, 0, 0, 0, 10000, CauseKind::kStart, -1, -1, -1),
                FiringEvent(b, 0, 2000, 10000, 15000, CauseKind::kStart, -1, -1, -1)};
  TraceModel model = Model(log);
  CriticalPath path = FindCriticalPath(model, model.span_begin(), model.span_end());
  ASSERT_EQ(path.firings.size(), 2u);
  EXPECT_EQ(model.firings[path.firings[0].firing].actor, a);
  EXPECT_EQ(path.firings[1].link, PathLink::kQueue);
  EXPECT_STREQ(PathLinkName(path.firings[1].link), "queue");
}

TEST(CriticalPathTest, AWindowCutsThePathAndClipsTheFiringThatStraddlesItsStart) {
  TraceModel model = Model(FreeRunningChain({1000, 4000, 1000}, 8));
  // From 11 us: stage1 piece 2 runs 9..13 us, so the path starts there, clipped to 2 us of it.
  // Up to 29.5 us: the last firing ending by then is stage1 piece 6 (ends 29 us).
  CriticalPath path = FindCriticalPath(model, 11000, 29500);
  ASSERT_FALSE(path.firings.empty());
  const FiringRecord& first = model.firings[path.firings.front().firing];
  EXPECT_EQ(first.actor, 1);
  EXPECT_EQ(first.firing, 2);
  const FiringRecord& last = model.firings[path.firings.back().firing];
  EXPECT_EQ(last.actor, 1);
  EXPECT_EQ(last.firing, 6);
  EXPECT_EQ(path.begin, 11000);
  EXPECT_EQ(path.end, 29000);
  EXPECT_EQ(path.busy_ns + path.wait_ns, path.length_ns());
  EXPECT_EQ(path.busy_ns, 18000);
  // Nothing ends in an empty window.
  EXPECT_TRUE(FindCriticalPath(model, 100000, 200000).firings.empty());
}

}  // namespace
}  // namespace trace
}  // namespace softwire
