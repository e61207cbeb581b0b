// ThreadBuffer's contract (thread_buffers.h): page-aligned, at least the bytes asked, kept while
// later requests are no larger, distinct per use and per thread.
#include "runtime/kernels/cpu/thread_buffers.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <thread>

namespace softwire {
namespace runtime {
namespace {

TEST(ThreadBuffer, IsPageAlignedAndKeptWhileRequestsAreNoLarger) {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  void* first = ThreadBuffer(ThreadBufferUse::kScratchpad, 100000);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % page, 0u);
  std::memset(first, 0xab, 100000);  // Writable over all the bytes asked.
  EXPECT_EQ(ThreadBuffer(ThreadBufferUse::kScratchpad, 100000), first);
  EXPECT_EQ(ThreadBuffer(ThreadBufferUse::kScratchpad, 10), first);
  void* grown = ThreadBuffer(ThreadBufferUse::kScratchpad, 1 << 20);
  std::memset(grown, 0xcd, 1 << 20);
  EXPECT_EQ(ThreadBuffer(ThreadBufferUse::kScratchpad, 100000), grown);
}

TEST(ThreadBuffer, UsesAndThreadsHaveBuffersOfTheirOwn) {
  void* scratchpad = ThreadBuffer(ThreadBufferUse::kScratchpad, 4096);
  void* operand = ThreadBuffer(ThreadBufferUse::kOperandA, 4096);
  EXPECT_NE(scratchpad, operand);
  void* other_thread = nullptr;
  std::thread([&] { other_thread = ThreadBuffer(ThreadBufferUse::kScratchpad, 4096); }).join();
  EXPECT_NE(other_thread, nullptr);
  EXPECT_NE(other_thread, scratchpad);
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
