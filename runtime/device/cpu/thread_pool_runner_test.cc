#include "runtime/device/cpu/thread_pool_runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace softwire {
namespace runtime {
namespace {

// Runs one ParallelFor and checks that its ranges cover [0, count) exactly once.
void ExpectExactCover(ThreadPoolRunner* runner, int64_t count, int64_t min_chunk) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
  std::atomic<int> short_ranges{0};
  std::atomic<int> ranges{0};
  runner->ParallelFor(count, min_chunk, [&](int64_t begin, int64_t end) {
    ranges.fetch_add(1);
    if (end - begin < min_chunk) short_ranges.fetch_add(1);
    for (int64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
  });
  for (int64_t i = 0; i < count; ++i)
    ASSERT_EQ(hits[i].load(), 1) << "count " << count << " i " << i;
  EXPECT_LE(ranges.load(), runner->threads());
  if (count >= min_chunk) {
    EXPECT_EQ(short_ranges.load(), 0) << count << " " << min_chunk;
  }
}

TEST(ThreadPoolRunnerTest, RangesCoverEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPoolRunner runner(threads);
    EXPECT_EQ(runner.threads(), threads);
    for (int64_t count : {0, 1, 2, 7, 64, 1000, 4097}) {
      for (int64_t min_chunk : {1, 3, 100}) ExpectExactCover(&runner, count, min_chunk);
    }
  }
}

TEST(ThreadPoolRunnerTest, LargeLoopsRunOnSeveralThreadsIncludingTheCaller) {
  ThreadPoolRunner runner(2);
  std::mutex mutex;
  std::set<std::thread::id> seen;
  for (int attempt = 0; attempt < 50 && seen.size() < 2; ++attempt) {
    runner.ParallelFor(2, 1, [&](int64_t, int64_t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // Let the helper get one.
      std::lock_guard<std::mutex> lock(mutex);
      seen.insert(std::this_thread::get_id());
    });
  }
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen.count(std::this_thread::get_id()), 1u);
}

TEST(ThreadPoolRunnerTest, SmallLoopsStayOnTheCallingThread) {
  ThreadPoolRunner runner(4);
  std::thread::id ran_on;
  runner.ParallelFor(10, 64, [&](int64_t begin, int64_t end) {
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 10);
    ran_on = std::this_thread::get_id();
  });
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(ThreadPoolRunnerTest, NestedAndConcurrentCallsFinishWithoutDeadlock) {
  ThreadPoolRunner runner(2);
  std::atomic<int64_t> total{0};
  auto work = [&] {
    for (int round = 0; round < 200; ++round) {
      runner.ParallelFor(8, 1, [&](int64_t begin, int64_t end) {
        runner.ParallelFor(4, 1,
                           [&](int64_t b, int64_t e) { total.fetch_add((end - begin) * (e - b)); });
      });
    }
  };
  std::thread other(work);
  work();
  other.join();
  // Each outer range of length L adds L * 4; the outer ranges sum to 8.
  EXPECT_EQ(total.load(), 2 * 200 * 8 * 4);
}

TEST(ThreadPoolRunnerTest, ParkedHelpersWakeForTheNextLoop) {
  ThreadPoolRunner runner(2, std::chrono::microseconds(0));  // Park at once.
  for (int round = 0; round < 100; ++round) {
    if (round % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ExpectExactCover(&runner, 1000, 1);
  }
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
