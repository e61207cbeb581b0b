// TraceRecorder: writers keep every event below the cap, count the rest, never allocate
// while recording, and can write from many threads at once.
#include "trace/trace_recorder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "base/testing/allocation_counter.h"

namespace softwire {
namespace trace {
namespace {

TraceEvent Numbered(int32_t writer, int64_t index) {
  return FiringEvent(writer, index, index, index, index + 1, CauseKind::kPreviousFiring, writer, -1,
                     index - 1);
}

TEST(TraceRecorderTest, EveryWriterKeepsItsEventsInOrderBelowTheCap) {
  StatusOr<std::unique_ptr<TraceRecorder>> recorder = TraceRecorder::Create(100000, 3);
  ASSERT_TRUE(recorder.ok()) << recorder.status();
  for (int64_t i = 0; i < 5000; ++i) {
    for (int w = 0; w < 3; ++w) (*recorder)->writer(w)->Append(Numbered(w, i));
  }
  EXPECT_EQ((*recorder)->recorded(), 15000);
  std::vector<TraceEvent> events = (*recorder)->TakeEvents();
  ASSERT_EQ(events.size(), 15000u);
  std::vector<int64_t> next(3, 0);
  for (const TraceEvent& event : events) {
    ASSERT_EQ(event.index, next[static_cast<size_t>(event.actor)]) << "writer " << event.actor;
    ++next[static_cast<size_t>(event.actor)];
  }
  EXPECT_EQ((*recorder)->dropped(), 0);
}

TEST(TraceRecorderTest, TheCapKeepsTheFirstEventsAndCountsTheDroppedOnes) {
  StatusOr<std::unique_ptr<TraceRecorder>> recorder = TraceRecorder::Create(100, 1);
  ASSERT_TRUE(recorder.ok());
  for (int64_t i = 0; i < 250; ++i) (*recorder)->writer(0)->Append(Numbered(0, i));
  EXPECT_EQ((*recorder)->dropped(), 150);
  std::vector<TraceEvent> events = (*recorder)->TakeEvents();
  ASSERT_EQ(events.size(), 100u);
  EXPECT_EQ(events.front().index, 0);
  EXPECT_EQ(events.back().index, 99);
}

TEST(TraceRecorderTest, TheCapIsSharedByAllWritersOfTheJob) {
  StatusOr<std::unique_ptr<TraceRecorder>> recorder = TraceRecorder::Create(1000, 4);
  ASSERT_TRUE(recorder.ok());
  for (int64_t i = 0; i < 1000; ++i) {
    for (int w = 0; w < 4; ++w) (*recorder)->writer(w)->Append(Numbered(w, i));
  }
  EXPECT_EQ((*recorder)->recorded() + (*recorder)->dropped(), 4000);
  EXPECT_EQ((*recorder)->recorded(), 1000);
  EXPECT_EQ((*recorder)->TakeEvents().size(), 1000u);
}

TEST(TraceRecorderTest, WritersOnManyThreadsLoseNothing) {
  constexpr int kThreads = 4;
  constexpr int64_t kEach = 50000;
  StatusOr<std::unique_ptr<TraceRecorder>> recorder = TraceRecorder::Create(1 << 20, kThreads);
  ASSERT_TRUE(recorder.ok());
  std::vector<std::thread> threads;
  for (int w = 0; w < kThreads; ++w) {
    threads.emplace_back([&recorder, w] {
      TraceWriter* writer = (*recorder)->writer(w);
      for (int64_t i = 0; i < kEach; ++i) writer->Append(Numbered(w, i));
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<TraceEvent> events = (*recorder)->TakeEvents();
  ASSERT_EQ(events.size(), static_cast<size_t>(kThreads * kEach));
  std::vector<int64_t> next(kThreads, 0);
  for (const TraceEvent& event : events) {
    ASSERT_EQ(event.index, next[static_cast<size_t>(event.actor)]);
    ++next[static_cast<size_t>(event.actor)];
  }
}

TEST(TraceRecorderTest, RecordingAllocatesNothingAndTheArenaIsReusedAfterTaking) {
  StatusOr<std::unique_ptr<TraceRecorder>> recorder = TraceRecorder::Create(1 << 16, 2);
  ASSERT_TRUE(recorder.ok());
  TraceWriter* writer = (*recorder)->writer(1);
  {
    softwire::testing::AllocationCounter counter;
    for (int64_t i = 0; i < 60000; ++i) writer->Append(Numbered(1, i));  // Many chunk claims.
    for (int64_t i = 0; i < 10000; ++i) writer->Append(Numbered(1, i));  // Past the cap.
    EXPECT_EQ(counter.allocations(), 0);
  }
  EXPECT_EQ((*recorder)->dropped(), 70000 - (1 << 16));
  EXPECT_EQ((*recorder)->TakeEvents().size(), static_cast<size_t>(1 << 16));
  writer->Append(Numbered(1, 7));
  std::vector<TraceEvent> again = (*recorder)->TakeEvents();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].index, 7);
}

TEST(TraceRecorderTest, AReservedEventIsKeptOnlyWhenCommitted) {
  StatusOr<std::unique_ptr<TraceRecorder>> recorder = TraceRecorder::Create(2, 1);
  ASSERT_TRUE(recorder.ok());
  TraceWriter* writer = (*recorder)->writer(0);
  TraceEvent* first = writer->Reserve();
  ASSERT_NE(first, nullptr);
  *first = Numbered(0, 10);  // A firing that then fails: never committed.
  EXPECT_EQ(writer->Reserve(), first) << "uncommitted room is reused";
  *first = Numbered(0, 11);
  writer->Commit();
  TraceEvent* second = writer->Reserve();
  ASSERT_NE(second, nullptr);
  EXPECT_NE(second, first);
  *second = Numbered(0, 12);
  writer->Commit();
  EXPECT_EQ(writer->Reserve(), nullptr) << "the cap of 2 is reached";
  writer->Commit();
  EXPECT_EQ(writer->dropped(), 1);
  std::vector<TraceEvent> events = (*recorder)->TakeEvents();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].index, 11);
  EXPECT_EQ(events[1].index, 12);
}

TEST(TraceRecorderTest, BadCapsAndWriterCountsAreRefused) {
  EXPECT_FALSE(TraceRecorder::Create(0, 1).ok());
  EXPECT_FALSE(TraceRecorder::Create(10, 0).ok());
}

TEST(StepWindowTest, WindowsParseFromTheCommandLineForms) {
  StatusOr<StepWindow> range = ParseStepWindow("2:5");
  ASSERT_TRUE(range.ok());
  EXPECT_FALSE(range->Contains(1));
  EXPECT_TRUE(range->Contains(2));
  EXPECT_TRUE(range->Contains(4));
  EXPECT_FALSE(range->Contains(5));
  EXPECT_EQ(range->ToString(), "2:5");
  StatusOr<StepWindow> open = ParseStepWindow("3:");
  ASSERT_TRUE(open.ok());
  EXPECT_TRUE(open->Contains(1000000));
  EXPECT_FALSE(open->Contains(2));
  StatusOr<StepWindow> one = ParseStepWindow("4");
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one->Contains(4));
  EXPECT_FALSE(one->Contains(5));
  EXPECT_TRUE(StepWindow().all());
  EXPECT_EQ(StepWindow().ToString(), "all");
  for (const char* bad : {"", ":", "a:b", "5:5", "6:2", "-1:3", "1:2:3"}) {
    EXPECT_FALSE(ParseStepWindow(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace trace
}  // namespace softwire
