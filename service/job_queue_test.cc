// The queue starts jobs first come, first served, on the first free devices, and lets a later
// job that fits start before an earlier one that does not (backfill).
#include "service/job_queue.h"

#include <gtest/gtest.h>

namespace softwire {
namespace service {
namespace {

TEST(JobQueueTest, JobsStartInSubmissionOrderOnTheFirstFreeDevices) {
  JobQueue queue;
  queue.Push("job-1", 1);
  queue.Push("job-2", 2);
  std::vector<bool> free = {false, true, true, true};
  std::vector<JobQueue::Start> starts = queue.TakeStartable(&free);
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[0].job_id, "job-1");
  EXPECT_EQ(starts[0].devices, std::vector<int>({1}));
  EXPECT_EQ(starts[1].job_id, "job-2");
  EXPECT_EQ(starts[1].devices, std::vector<int>({2, 3}));
  EXPECT_EQ(free, std::vector<bool>({false, false, false, false}));
  EXPECT_EQ(queue.size(), 0);
}

TEST(JobQueueTest, ALaterJobThatFitsStartsBeforeAnEarlierOneThatDoesNot) {
  JobQueue queue;
  queue.Push("job-1", 3);
  queue.Push("job-2", 1);
  queue.Push("job-3", 1);
  std::vector<bool> free = {true, false, true};
  std::vector<JobQueue::Start> starts = queue.TakeStartable(&free);
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[0].job_id, "job-2");
  EXPECT_EQ(starts[1].job_id, "job-3");
  EXPECT_EQ(queue.size(), 1);
  EXPECT_EQ(queue.Position("job-1"), 0);
  free = {true, true, true};
  starts = queue.TakeStartable(&free);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].devices, std::vector<int>({0, 1, 2}));
}

TEST(JobQueueTest, ARemovedJobNeverStarts) {
  JobQueue queue;
  queue.Push("job-1", 1);
  queue.Push("job-2", 1);
  EXPECT_TRUE(queue.Remove("job-1"));
  EXPECT_FALSE(queue.Remove("job-1"));
  EXPECT_EQ(queue.Position("job-2"), 0);
  std::vector<bool> free = {true};
  std::vector<JobQueue::Start> starts = queue.TakeStartable(&free);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].job_id, "job-2");
}

}  // namespace
}  // namespace service
}  // namespace softwire
