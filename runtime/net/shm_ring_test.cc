// ShmRing between two threads (the two ends map one segment, as two processes do): a reader
// asleep on an empty cell wakes when the writer fills it, the bytes arrive in order across more
// fills than the ring has cells, and a waiter told to stop gives up with Unavailable.
#include "runtime/net/shm_ring.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace softwire {
namespace runtime {
namespace net {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct RingPair {
  std::unique_ptr<ShmRing> writer;
  std::unique_ptr<ShmRing> reader;
};

RingPair MakeRing(int cells, int64_t cell_bytes) {
  StatusOr<std::unique_ptr<ShmRing>> writer = ShmRing::Create(cells, cell_bytes);
  EXPECT_TRUE(writer.ok()) << writer.status();
  if (!writer.ok()) return {};
  StatusOr<std::unique_ptr<ShmRing>> reader = ShmRing::Open((*writer)->name());
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return {};
  return {std::move(writer).value(), std::move(reader).value()};
}

TEST(ShmRingTest, AReaderAsleepOnAnEmptyCellWakesWhenTheWriterFillsIt) {
  RingPair ring = MakeRing(2, 4096);
  ASSERT_NE(ring.reader, nullptr);
  const auto always = [] { return true; };
  std::vector<char> got(100);
  Clock::time_point read_at;
  std::thread reader([&] {
    ASSERT_TRUE(ring.reader->Read(got.data(), 100, always).ok());
    read_at = Clock::now();
  });
  std::this_thread::sleep_for(50ms);  // Long past the spin: the reader sleeps on the futex.
  std::vector<char> sent(100);
  std::iota(sent.begin(), sent.end(), 1);
  const Clock::time_point written_at = Clock::now();
  ASSERT_TRUE(ring.writer->Write(sent.data(), 100, always).ok());
  reader.join();
  EXPECT_EQ(got, sent);
  // Woken by the writer, not by the 2 ms re-check alone (loose bound for a loaded machine).
  EXPECT_LT(read_at - written_at, 1s);
}

TEST(ShmRingTest, BytesArriveInOrderAcrossMoreFillsThanCells) {
  RingPair ring = MakeRing(3, 1000);
  ASSERT_NE(ring.reader, nullptr);
  const auto always = [] { return true; };
  std::vector<char> sent(25'000);
  std::iota(sent.begin(), sent.end(), 0);
  std::thread writer([&] {
    for (int64_t at = 0; at < 25'000; at += 2'500) {
      ASSERT_TRUE(ring.writer->Write(sent.data() + at, 2'500, always).ok());
    }
  });
  std::vector<char> got(25'000);
  for (int64_t at = 0; at < 25'000; at += 2'500) {
    ASSERT_TRUE(ring.reader->Read(got.data() + at, 2'500, always).ok());
  }
  writer.join();
  EXPECT_EQ(got, sent);
}

TEST(ShmRingTest, AWaiterToldToStopGivesUp) {
  RingPair ring = MakeRing(1, 64);
  ASSERT_NE(ring.reader, nullptr);
  std::atomic<bool> keep{true};
  const Clock::time_point began = Clock::now();
  std::thread stopper([&] {
    std::this_thread::sleep_for(20ms);
    keep.store(false);
  });
  char byte;
  const Status status = ring.reader->Read(&byte, 1, [&] { return keep.load(); });
  stopper.join();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status;
  EXPECT_LT(Clock::now() - began, 5s);
}

// A segment whose creator was killed before its reader mapped it is removed by the next
// process's first Create; a live process's segment is not.
TEST(ShmRingTest, SegmentsOfProcessesThatNoLongerRunAreRemoved) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);  // Reaped: the pid runs nothing now.
  const std::string orphan = "/softwire-dp-" + std::to_string(child) + "-7";
  const std::string live = "/softwire-dp-" + std::to_string(getpid()) + "-999999";
  for (const std::string& name : {orphan, live}) {
    const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    ASSERT_GE(fd, 0) << name;
    close(fd);
  }
  EXPECT_GE(RemoveOrphanedRings(), 1);
  EXPECT_LT(shm_open(orphan.c_str(), O_RDWR, 0), 0) << orphan << " is still there";
  const int kept = shm_open(live.c_str(), O_RDWR, 0);
  EXPECT_GE(kept, 0) << live << " was removed";
  if (kept >= 0) close(kept);
  shm_unlink(live.c_str());
  shm_unlink(orphan.c_str());
}

}  // namespace
}  // namespace net
}  // namespace runtime
}  // namespace softwire
