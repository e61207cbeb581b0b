#include "runtime/device/cpu/strand_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace softwire {
namespace runtime {
namespace {

// Records completions reported for deferred launches, with the thread that reported them.
class RecordingListener final : public LaunchListener {
 public:
  struct Completion {
    int64_t actor;
    int64_t firing;
    Status status;
    std::thread::id thread;
  };
  void OnLaunchCompleted(int64_t actor, int64_t firing, Status status) override {
    std::lock_guard<std::mutex> lock(mutex_);
    completions_.push_back({actor, firing, std::move(status), std::this_thread::get_id()});
  }
  std::vector<Completion> completions() {
    std::lock_guard<std::mutex> lock(mutex_);
    return completions_;
  }

 private:
  std::mutex mutex_;
  std::vector<Completion> completions_;
};

// Blocks in Run until opened; records the thread it ran on.
class GateKernel final : public Kernel {
 public:
  Status Run(const KernelContext&) override {
    ran_on = std::this_thread::get_id();
    entered.store(true);
    std::unique_lock<std::mutex> lock(mutex_);
    condition_.wait(lock, [&] { return open_; });
    return Status::Ok();
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    condition_.notify_all();
  }
  std::atomic<bool> entered{false};
  std::thread::id ran_on;

 private:
  std::mutex mutex_;
  std::condition_variable condition_;
  bool open_ = false;
};

class CountingKernel final : public Kernel {
 public:
  Status Run(const KernelContext&) override {
    ran_on = std::this_thread::get_id();
    ++runs;
    return Status::Ok();
  }
  int runs = 0;
  std::thread::id ran_on;
};

class ThrowingKernel final : public Kernel {
 public:
  Status Run(const KernelContext&) override { throw std::runtime_error("out of luck"); }
};

// Finishes off the queue (a send): Start keeps `done`, the test ends the work with Finish.
class OffQueueKernel final : public Kernel {
 public:
  Status Run(const KernelContext&) override { return InternalError("Run on an off-queue kernel"); }
  bool finishes_off_queue() const override { return true; }
  void Start(const KernelContext&, std::function<void(Status)> done) override {
    std::lock_guard<std::mutex> lock(mutex_);
    started_on = std::this_thread::get_id();
    ++starts;
    done_ = std::move(done);
  }
  // Ends the started work; false when none was started.
  bool Finish(Status status) {
    std::function<void(Status)> done;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done.swap(done_);
    }
    if (!done) return false;
    done(std::move(status));
    return true;
  }
  int started() {
    std::lock_guard<std::mutex> lock(mutex_);
    return starts;
  }
  std::thread::id started_on;

 private:
  std::mutex mutex_;
  std::function<void(Status)> done_;
  int starts = 0;
};

// Finishes off the queue, but its work ends before Start returns (a small fill written on the
// launching thread), with `status`.
class DoneInStartKernel final : public Kernel {
 public:
  explicit DoneInStartKernel(Status status) : status_(std::move(status)) {}
  Status Run(const KernelContext&) override { return InternalError("Run on an off-queue kernel"); }
  bool finishes_off_queue() const override { return true; }
  void Start(const KernelContext&, std::function<void(Status)> done) override { done(status_); }

 private:
  Status status_;
};

// One strand, its listener, and the stopping flag of its job; Launch builds the request.
class StrandQueueTest : public ::testing::Test {
 protected:
  LaunchRequest RequestFor(int64_t actor, int64_t firing, Kernel* kernel) {
    LaunchRequest request;
    request.listener = &listener_;
    request.stopping = &stopping_;
    request.actor = actor;
    request.firing = firing;
    request.kernel = kernel;
    request.context = &context_;
    return request;
  }

  DeviceQueue::Outcome Launch(int64_t actor, int64_t firing, Kernel* kernel, Status* status) {
    return queue_.Launch(RequestFor(actor, firing, kernel), status);
  }

  // A thread that holds the strand with `gate` (launched inline as actor 1, firing 0) until the
  // test opens it, then lets the strand go; returns once the gate kernel runs.
  std::thread HoldStrand(GateKernel* gate) {
    std::thread holder([this, gate] {
      Status status;
      EXPECT_EQ(Launch(1, 0, gate, &status), DeviceQueue::Outcome::kRanInline);
      queue_.ReleaseInline();
    });
    while (!gate->entered.load()) std::this_thread::yield();
    return holder;
  }

  RecordingListener listener_;
  std::atomic<bool> stopping_{false};
  StrandQueue queue_;
  KernelContext context_;
};

TEST_F(StrandQueueTest, AnIdleStrandRunsTheKernelInlineOnTheCallingThread) {
  CountingKernel kernel;
  Status status = InternalError("unset");
  EXPECT_EQ(Launch(1, 0, &kernel, &status), DeviceQueue::Outcome::kRanInline);
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(kernel.runs, 1);
  EXPECT_EQ(kernel.ran_on, std::this_thread::get_id());
  queue_.ReleaseInline();
  EXPECT_TRUE(listener_.completions().empty());
}

TEST_F(StrandQueueTest, ABusyStrandDefersAndItsHolderRunsTheLaunchBeforeLettingGo) {
  GateKernel gate;
  CountingKernel deferred;
  std::thread holder = HoldStrand(&gate);
  Status unused;
  EXPECT_EQ(Launch(2, 7, &deferred, &unused), DeviceQueue::Outcome::kDeferred);
  EXPECT_EQ(deferred.runs, 0);
  gate.Open();
  holder.join();
  EXPECT_EQ(deferred.runs, 1);
  EXPECT_EQ(deferred.ran_on, gate.ran_on) << "the holder ran it";
  std::vector<RecordingListener::Completion> completions = listener_.completions();
  ASSERT_EQ(completions.size(), 1u);
  EXPECT_EQ(completions[0].actor, 2);
  EXPECT_EQ(completions[0].firing, 7);
  EXPECT_TRUE(completions[0].status.ok());
  // The strand is free again.
  Status status;
  EXPECT_EQ(Launch(3, 0, &deferred, &status), DeviceQueue::Outcome::kRanInline);
  queue_.ReleaseInline();
}

TEST_F(StrandQueueTest, LaunchesQueuedWhenTheJobStopsAreCancelledNotRun) {
  GateKernel gate;
  CountingKernel deferred;
  std::thread holder = HoldStrand(&gate);
  Status unused;
  ASSERT_EQ(Launch(2, 0, &deferred, &unused), DeviceQueue::Outcome::kDeferred);
  stopping_.store(true);
  gate.Open();
  holder.join();
  EXPECT_EQ(deferred.runs, 0);
  ASSERT_EQ(listener_.completions().size(), 1u);
  EXPECT_EQ(listener_.completions()[0].status.code(), StatusCode::kCancelled);
}

TEST_F(StrandQueueTest, AKernelThatThrowsFailsItsLaunchAndFreesTheStrand) {
  ThrowingKernel throwing;
  CountingKernel counting;
  Status status;
  ASSERT_EQ(Launch(1, 0, &throwing, &status), DeviceQueue::Outcome::kRanInline);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("out of luck"), std::string::npos) << status;
  queue_.ReleaseInline();
  EXPECT_EQ(Launch(2, 0, &counting, &status), DeviceQueue::Outcome::kRanInline);
  EXPECT_TRUE(status.ok());
  queue_.ReleaseInline();
}

TEST_F(StrandQueueTest, AKernelThatFinishesOffTheQueueLetsTheStrandGoUntilItsWorkEnds) {
  OffQueueKernel send;
  CountingKernel other;
  FiringTimes times;
  LaunchRequest request = RequestFor(1, 4, &send);
  request.times = &times;
  Status unused;
  ASSERT_EQ(queue_.Launch(request, &unused), DeviceQueue::Outcome::kDeferred);
  EXPECT_EQ(send.started(), 1);
  EXPECT_EQ(send.started_on, std::this_thread::get_id()) << "started on the launching thread";
  EXPECT_GE(times.start.load(), 0);
  EXPECT_LT(times.end.load(), 0) << "its work has not ended";
  // While the send's work goes on, the strand is free: another kernel runs inline.
  Status status = InternalError("unset");
  ASSERT_EQ(Launch(2, 0, &other, &status), DeviceQueue::Outcome::kRanInline);
  EXPECT_TRUE(status.ok());
  queue_.ReleaseInline();
  EXPECT_EQ(other.runs, 1);
  EXPECT_TRUE(listener_.completions().empty()) << "the send is still in flight";
  // Its work ends on another thread (a data plane's writer), which reports the completion.
  std::thread writer([&] { EXPECT_TRUE(send.Finish(Status::Ok())); });
  const std::thread::id writer_id = writer.get_id();
  writer.join();
  std::vector<RecordingListener::Completion> completions = listener_.completions();
  ASSERT_EQ(completions.size(), 1u);
  EXPECT_EQ(completions[0].actor, 1);
  EXPECT_EQ(completions[0].firing, 4);
  EXPECT_TRUE(completions[0].status.ok());
  EXPECT_EQ(completions[0].thread, writer_id);
  EXPECT_GE(times.end.load(), times.start.load());
}

TEST_F(StrandQueueTest, AnOffQueueLaunchWhoseWorkEndsInStartRanInlineAndHoldsTheStrand) {
  DoneInStartKernel send(Status::Ok());
  FiringTimes times;
  LaunchRequest request = RequestFor(1, 5, &send);
  request.times = &times;
  Status status = InternalError("unset");
  ASSERT_EQ(queue_.Launch(request, &status), DeviceQueue::Outcome::kRanInline);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_GE(times.end.load(), times.start.load());
  EXPECT_GE(times.start.load(), 0);
  // The caller holds the strand, as after any inline run: another launch waits behind it.
  CountingKernel other;
  Status unused;
  std::thread other_thread(
      [&] { EXPECT_EQ(Launch(2, 0, &other, &unused), DeviceQueue::Outcome::kDeferred); });
  other_thread.join();
  EXPECT_EQ(other.runs, 0);
  queue_.ReleaseInline();  // Runs the waiting launch, which alone is reported.
  EXPECT_EQ(other.runs, 1);
  std::vector<RecordingListener::Completion> completions = listener_.completions();
  ASSERT_EQ(completions.size(), 1u);
  EXPECT_EQ(completions[0].actor, 2);
  // A failure that ends the work in Start comes back the same way.
  DoneInStartKernel failing(UnavailableError("connection to node1 broke"));
  ASSERT_EQ(Launch(3, 0, &failing, &status), DeviceQueue::Outcome::kRanInline);
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  queue_.ReleaseInline();
  EXPECT_EQ(listener_.completions().size(), 1u);
}

TEST_F(StrandQueueTest, AnOffQueueLaunchStartedByTheHolderIsReportedAlsoWhenItEndsInStart) {
  GateKernel gate;
  DoneInStartKernel send(Status::Ok());
  std::thread holder = HoldStrand(&gate);
  Status unused;
  ASSERT_EQ(Launch(2, 6, &send, &unused), DeviceQueue::Outcome::kDeferred);
  gate.Open();
  holder.join();
  std::vector<RecordingListener::Completion> completions = listener_.completions();
  ASSERT_EQ(completions.size(), 1u);
  EXPECT_EQ(completions[0].actor, 2);
  EXPECT_EQ(completions[0].firing, 6);
  EXPECT_TRUE(completions[0].status.ok());
}

TEST_F(StrandQueueTest, AnOffQueueLaunchQueuedBehindABusyStrandIsStartedByTheHolder) {
  GateKernel gate;
  OffQueueKernel send;
  std::thread holder = HoldStrand(&gate);
  Status unused;
  ASSERT_EQ(Launch(2, 3, &send, &unused), DeviceQueue::Outcome::kDeferred);
  gate.Open();
  holder.join();
  EXPECT_EQ(send.started(), 1);
  EXPECT_EQ(send.started_on, gate.ran_on) << "the holder started it";
  EXPECT_TRUE(listener_.completions().empty()) << "started, not completed";
  // The strand is free although the send's work has not ended.
  CountingKernel other;
  Status status;
  EXPECT_EQ(Launch(3, 0, &other, &status), DeviceQueue::Outcome::kRanInline);
  queue_.ReleaseInline();
  ASSERT_TRUE(send.Finish(UnavailableError("connection to node1 broke")));
  ASSERT_EQ(listener_.completions().size(), 1u);
  EXPECT_EQ(listener_.completions()[0].firing, 3);
  EXPECT_EQ(listener_.completions()[0].status.code(), StatusCode::kUnavailable);
}

TEST_F(StrandQueueTest, AnOffQueueLaunchOfAStoppingJobIsCancelledNotStarted) {
  stopping_.store(true);
  OffQueueKernel send;
  Status unused;
  ASSERT_EQ(Launch(1, 0, &send, &unused), DeviceQueue::Outcome::kDeferred);
  EXPECT_EQ(send.started(), 0);
  ASSERT_EQ(listener_.completions().size(), 1u);
  EXPECT_EQ(listener_.completions()[0].status.code(), StatusCode::kCancelled);
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
