// A job's event log numbers its events, replays them after a reopen, ignores and cuts off a
// torn last record, wakes waiters, and ends with its terminal event.
#include "service/event_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/file.h"

namespace softwire {
namespace service {
namespace {

class EventLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = ::testing::TempDir() + "/event_log_test_" + std::to_string(::getpid()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(directory_);
    ASSERT_TRUE(MakeDirectories(directory_).ok());
    path_ = directory_ + "/events.log";
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  static proto::JobEvent Step(int64_t step) {
    proto::JobEvent event;
    event.mutable_step()->set_step(step);
    return event;
  }

  std::string directory_;
  std::string path_;
};

TEST_F(EventLogTest, EventsAreNumberedFromOneAndReadBackAfterAReopen) {
  {
    StatusOr<std::unique_ptr<EventLog>> log = EventLog::Open(path_);
    ASSERT_TRUE(log.ok()) << log.status();
    for (int64_t step = 0; step < 3; ++step) {
      StatusOr<proto::JobEvent> appended = (*log)->Append(Step(step));
      ASSERT_TRUE(appended.ok()) << appended.status();
      EXPECT_EQ(appended->sequence(), step + 1);
      EXPECT_GT(appended->time_unix(), 0);
    }
  }
  StatusOr<std::unique_ptr<EventLog>> reopened = EventLog::Open(path_);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ((*reopened)->last_sequence(), 3);
  std::vector<proto::JobEvent> since = (*reopened)->WaitSince(2, std::chrono::milliseconds(0));
  ASSERT_EQ(since.size(), 2u);
  EXPECT_EQ(since[0].step().step(), 1);
  EXPECT_EQ(since[1].sequence(), 3);
}

TEST_F(EventLogTest, ATornLastRecordIsIgnoredAndAppendsGoOnAfterTheWholeOnes) {
  {
    StatusOr<std::unique_ptr<EventLog>> log = EventLog::Open(path_);
    ASSERT_TRUE(log.ok()) << log.status();
    ASSERT_TRUE((*log)->Append(Step(0)).ok());
    ASSERT_TRUE((*log)->Append(Step(1)).ok());
  }
  const std::string torn = EventRecord(Step(2));
  {
    std::ofstream out(path_, std::ios::app | std::ios::binary);
    out.write(torn.data(), static_cast<std::streamsize>(torn.size() - 3));  // A killed write.
  }
  {
    StatusOr<std::unique_ptr<EventLog>> log = EventLog::Open(path_);
    ASSERT_TRUE(log.ok()) << log.status();
    EXPECT_EQ((*log)->last_sequence(), 2);
    StatusOr<proto::JobEvent> appended = (*log)->Append(Step(2));
    ASSERT_TRUE(appended.ok()) << appended.status();
    EXPECT_EQ(appended->sequence(), 3);
  }
  StatusOr<std::unique_ptr<EventLog>> log = EventLog::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_EQ((*log)->last_sequence(), 3);
  EXPECT_EQ((*log)->events().back().step().step(), 2);
}

TEST_F(EventLogTest, AWaiterWakesForTheNextEventAndAnEndedFeedTakesNoMore) {
  StatusOr<std::unique_ptr<EventLog>> log = EventLog::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_TRUE((*log)->WaitSince(1, std::chrono::milliseconds(10)).empty());
  std::thread appender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    proto::JobEvent finished;
    finished.mutable_finished()->set_steps(1);
    ASSERT_TRUE((*log)->Append(finished).ok());
  });
  std::vector<proto::JobEvent> events = (*log)->WaitSince(1, std::chrono::seconds(10));
  appender.join();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(IsTerminalEvent(events[0]));
  EXPECT_TRUE((*log)->ended());
  EXPECT_EQ((*log)->Append(Step(0)).status().code(), StatusCode::kFailedPrecondition);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE((*log)->WaitSince(2, std::chrono::seconds(10)).empty());  // Ended: no wait.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

}  // namespace
}  // namespace service
}  // namespace softwire
