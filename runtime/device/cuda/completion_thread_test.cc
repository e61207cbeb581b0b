#include "runtime/device/cuda/completion_thread.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <vector>

namespace softwire {
namespace runtime {
namespace {

using std::chrono::seconds;

// Markers the test reaches by hand: Wait blocks until Reach(marker), as a stream's event would.
class FakeMarkers final : public LaunchMarkers {
 public:
  Status Wait(void* marker, int64_t* start_ticks, int64_t* end_ticks) override {
    std::unique_lock<std::mutex> lock(mutex_);
    const bool reached =
        changed_.wait_for(lock, seconds(10), [&] { return reached_.count(marker) > 0; });
    if (!reached) return DeadlineExceededError("marker never reached");
    *start_ticks = 100 * reinterpret_cast<intptr_t>(marker);
    *end_ticks = *start_ticks + 7;
    if (failing_.count(marker) > 0) return InternalError("device 'fake': the kernel faulted");
    return Status::Ok();
  }
  void Recycle(void* marker) override {
    std::lock_guard<std::mutex> lock(mutex_);
    recycled_.push_back(marker);
  }

  void Reach(void* marker, bool fail = false) {
    std::lock_guard<std::mutex> lock(mutex_);
    reached_.insert(marker);
    if (fail) failing_.insert(marker);
    changed_.notify_all();
  }
  std::vector<void*> recycled() {
    std::lock_guard<std::mutex> lock(mutex_);
    return recycled_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::set<void*> reached_;
  std::set<void*> failing_;
  std::vector<void*> recycled_;
};

// Records completions in the order they are reported.
class RecordingListener final : public LaunchListener {
 public:
  struct Completion {
    int64_t actor;
    int64_t firing;
    Status status;
  };
  void OnLaunchCompleted(int64_t actor, int64_t firing, Status status) override {
    std::lock_guard<std::mutex> lock(mutex_);
    completions_.push_back({actor, firing, std::move(status)});
    changed_.notify_all();
  }
  bool WaitFor(size_t count) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, seconds(10), [&] { return completions_.size() >= count; });
  }
  std::vector<Completion> completions() {
    std::lock_guard<std::mutex> lock(mutex_);
    return completions_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Completion> completions_;
};

void* Marker(intptr_t n) {
  return reinterpret_cast<void*>(n);
}

PendingLaunch Launch(RecordingListener* listener, int64_t actor, int64_t firing, void* marker,
                     FiringTimes* times = nullptr, Status status = Status::Ok()) {
  PendingLaunch launch;
  launch.actor = actor;
  launch.firing = firing;
  launch.listener = listener;
  launch.times = times;
  launch.marker = marker;
  launch.status = std::move(status);
  return launch;
}

TEST(CompletionThreadTest,
     ReportsLaunchesInTheOrderTheyWereAddedEvenWhenLaterMarkersAreReachedFirst) {
  FakeMarkers markers;
  RecordingListener listener;
  CompletionThread thread("test-completion", &markers);
  thread.Add(Launch(&listener, 1, 0, Marker(1)));
  thread.Add(Launch(&listener, 2, 0, Marker(2)));
  thread.Add(Launch(&listener, 1, 1, Marker(3)));
  markers.Reach(Marker(3));
  markers.Reach(Marker(2));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(listener.completions().empty()) << "nothing may complete before the oldest launch";
  EXPECT_EQ(thread.pending(), 3);
  markers.Reach(Marker(1));
  ASSERT_TRUE(listener.WaitFor(3));
  std::vector<RecordingListener::Completion> done = listener.completions();
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[0].actor, 1);
  EXPECT_EQ(done[0].firing, 0);
  EXPECT_EQ(done[1].actor, 2);
  EXPECT_EQ(done[2].actor, 1);
  EXPECT_EQ(done[2].firing, 1);
  for (const auto& completion : done)
    EXPECT_TRUE(completion.status.ok()) << completion.status.ToString();
  EXPECT_EQ(markers.recycled(), (std::vector<void*>{Marker(1), Marker(2), Marker(3)}));
}

TEST(CompletionThreadTest, WritesTheKernelTimesOfATracedLaunchOnlyBeforeReportingIt) {
  FakeMarkers markers;
  RecordingListener listener;
  FiringTimes times;
  CompletionThread thread("test-completion", &markers);
  thread.Add(Launch(&listener, 4, 9, Marker(5), &times));
  EXPECT_EQ(times.end.load(), -1);
  markers.Reach(Marker(5));
  ASSERT_TRUE(listener.WaitFor(1));
  EXPECT_EQ(times.start.load(), 500);
  EXPECT_EQ(times.end.load(), 507);
}

TEST(CompletionThreadTest, ReportsAFailedEnqueueInItsTurnAndADeviceFaultAsTheLaunchStatus) {
  FakeMarkers markers;
  RecordingListener listener;
  CompletionThread thread("test-completion", &markers);
  FiringTimes times;
  thread.Add(Launch(&listener, 1, 0, Marker(1)));
  // Enqueue failed after its start event: its marker is still waited for, in order.
  thread.Add(
      Launch(&listener, 1, 1, Marker(2), &times, InternalError("relu: kernel launch failed")));
  // Cancelled before reaching the stream: no marker.
  thread.Add(Launch(&listener, 1, 2, nullptr, nullptr, CancelledError("the job is stopping")));
  thread.Add(Launch(&listener, 3, 0, Marker(4)));
  markers.Reach(Marker(4), /*fail=*/true);
  markers.Reach(Marker(2));
  markers.Reach(Marker(1));
  ASSERT_TRUE(listener.WaitFor(4));
  std::vector<RecordingListener::Completion> done = listener.completions();
  EXPECT_TRUE(done[0].status.ok());
  EXPECT_EQ(done[1].status.message(), "relu: kernel launch failed");
  EXPECT_EQ(times.end.load(), -1) << "a failed launch leaves its times unwritten";
  EXPECT_EQ(done[2].status.code(), StatusCode::kCancelled);
  EXPECT_EQ(done[2].firing, 2);
  EXPECT_EQ(done[3].status.message(), "device 'fake': the kernel faulted");
  EXPECT_EQ(markers.recycled().size(), 3u) << "every marker goes back, the failing ones too";
}

TEST(CompletionThreadTest, DestructionWaitsForAndReportsEveryLaunchAdded) {
  FakeMarkers markers;
  RecordingListener listener;
  {
    CompletionThread thread("test-completion", &markers);
    for (int firing = 0; firing < 50; ++firing) {
      thread.Add(Launch(&listener, 7, firing, Marker(firing + 1)));
    }
    std::thread reacher([&] {
      for (int firing = 49; firing >= 0; --firing) markers.Reach(Marker(firing + 1));
    });
    reacher.join();
  }  // Joins only after all 50 were reported.
  std::vector<RecordingListener::Completion> done = listener.completions();
  ASSERT_EQ(done.size(), 50u);
  for (int firing = 0; firing < 50; ++firing) EXPECT_EQ(done[firing].firing, firing);
}

TEST(CompletionThreadTest, AddNeverWaitsForTheDevice) {
  FakeMarkers markers;
  RecordingListener listener;
  CompletionThread thread("test-completion", &markers);
  const auto begin = std::chrono::steady_clock::now();
  for (int firing = 0; firing < 1000; ++firing)
    thread.Add(Launch(&listener, 1, firing, Marker(firing + 1)));
  EXPECT_LT(std::chrono::steady_clock::now() - begin, seconds(5));
  EXPECT_EQ(thread.pending(), 1000);
  for (int firing = 0; firing < 1000; ++firing) markers.Reach(Marker(firing + 1));
  ASSERT_TRUE(listener.WaitFor(1000));
}

// A kernel whose host function failed on its second launch.
class CountingOutcome final : public LaunchOutcome {
 public:
  Status TakeOutcome(bool reached) override {
    ++taken;
    reached_count += reached;
    return taken == 2 ? InternalError("sink: reporter refused the value") : Status::Ok();
  }
  int taken = 0;
  int reached_count = 0;
};

TEST(CompletionThreadTest, AsksAKernelForItsOwnOutcomeOncePerLaunchAfterTheMarker) {
  FakeMarkers markers;
  RecordingListener listener;
  CountingOutcome outcome;
  {
    CompletionThread thread("test-completion", &markers);
    for (int firing = 0; firing < 3; ++firing) {
      PendingLaunch launch = Launch(&listener, 2, firing, Marker(firing + 1));
      launch.outcome = &outcome;
      thread.Add(std::move(launch));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(outcome.taken, 0) << "asked before the device reached the marker";
    for (int firing = 0; firing < 3; ++firing) markers.Reach(Marker(firing + 1));
    ASSERT_TRUE(listener.WaitFor(3));
  }
  EXPECT_EQ(outcome.taken, 3);
  EXPECT_EQ(outcome.reached_count, 3);
  std::vector<RecordingListener::Completion> done = listener.completions();
  EXPECT_TRUE(done[0].status.ok());
  EXPECT_EQ(done[1].status.message(), "sink: reporter refused the value");
  EXPECT_TRUE(done[2].status.ok());
}

TEST(CompletionThreadTest, TellsTheKernelWhetherItsLaunchWasReached) {
  // A sink reads what its launch copied out only when the device reached the launch's end.
  FakeMarkers markers;
  RecordingListener listener;
  CountingOutcome outcome;
  {
    CompletionThread thread("test-completion", &markers);
    for (int firing = 0; firing < 3; ++firing) {
      PendingLaunch launch = firing == 1 ? Launch(&listener, 2, firing, nullptr, nullptr,
                                                  CancelledError("the job is stopping"))
                                         : Launch(&listener, 2, firing, Marker(firing + 1));
      launch.outcome = &outcome;
      thread.Add(std::move(launch));
    }
    markers.Reach(Marker(1));
    markers.Reach(Marker(3), /*fail=*/true);
    ASSERT_TRUE(listener.WaitFor(3));
  }
  EXPECT_EQ(outcome.taken, 3);
  EXPECT_EQ(outcome.reached_count, 1) << "only firing 0 reached its end without error";
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
