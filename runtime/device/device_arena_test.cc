#include "runtime/device/device_arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace softwire {
namespace runtime {
namespace {

TEST(DeviceArenaTest, AllocatesExactlyThePlannedBytesAlignedAndZeroed) {
  StatusOr<std::unique_ptr<DeviceArena>> arena = DeviceArena::Allocate("node0/cpu:0", 1000);
  ASSERT_TRUE(arena.ok()) << arena.status();
  EXPECT_EQ((*arena)->allocated_bytes(), 1000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*arena)->base()) % DeviceArena::kAlignment, 0u);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ((*arena)->base()[i], 0) << i;
}

TEST(DeviceArenaTest, RegionsInsideTheArenaAreItsAddresses) {
  auto arena = DeviceArena::Allocate("node0/cpu:0", 256);
  ASSERT_TRUE(arena.ok());
  StatusOr<char*> region = (*arena)->Region(64, 192, "register 'x'");
  ASSERT_TRUE(region.ok()) << region.status();
  EXPECT_EQ(*region, (*arena)->base() + 64);
}

TEST(DeviceArenaTest, RegionsBeyondTheArenaAreErrorsNamingWhatAndTheDevice) {
  auto arena = DeviceArena::Allocate("node0/cpu:0", 256);
  ASSERT_TRUE(arena.ok());
  StatusOr<char*> region = (*arena)->Region(200, 64, "register 'x'");
  ASSERT_FALSE(region.ok());
  EXPECT_EQ(region.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(region.status().message().find("register 'x'"), std::string::npos);
  EXPECT_NE(region.status().message().find("node0/cpu:0"), std::string::npos);
  EXPECT_FALSE((*arena)->Region(-1, 4, "x").ok());
}

TEST(DeviceArenaTest, AnEmptyPlanGetsAnEmptyArena) {
  auto arena = DeviceArena::Allocate("node0/cpu:0", 0);
  ASSERT_TRUE(arena.ok());
  EXPECT_EQ((*arena)->allocated_bytes(), 0);
  EXPECT_TRUE((*arena)->Region(0, 0, "nothing").ok());
}

TEST(DeviceArenaTest, AnImpossibleSizeIsResourceExhaustedNotACrash) {
  auto arena = DeviceArena::Allocate("node0/cpu:0", int64_t{1} << 62);
  ASSERT_FALSE(arena.ok());
  EXPECT_EQ(arena.status().code(), StatusCode::kResourceExhausted);
}

TEST(DeviceArenaTest, AReservedArenaChecksRegionsButHoldsNoMemory) {
  // 16 GiB, as a sim device models: nothing is allocated.
  auto arena = DeviceArena::Reserve("node0/sim:0", int64_t{16} << 30);
  ASSERT_TRUE(arena.ok()) << arena.status();
  EXPECT_FALSE((*arena)->holds_memory());
  EXPECT_EQ((*arena)->allocated_bytes(), 0);
  EXPECT_EQ((*arena)->planned_bytes(), int64_t{16} << 30);
  StatusOr<char*> inside = (*arena)->Region(int64_t{8} << 30, 4096, "register 'x'");
  ASSERT_TRUE(inside.ok());
  EXPECT_EQ(*inside, nullptr);
  StatusOr<char*> beyond = (*arena)->Region(int64_t{16} << 30, 1, "register 'y'");
  ASSERT_FALSE(beyond.ok());
  EXPECT_NE(beyond.status().message().find("register 'y'"), std::string::npos);
}

TEST(DeviceArenaTest, AnAdoptedArenaHandsItsMemoryBackThroughItsReleaseOnce) {
  std::vector<char> memory(8192);
  std::vector<char*> released;
  {
    std::unique_ptr<DeviceArena> arena = DeviceArena::Adopt(
        "node0/cuda:0", memory.data(), 8192, [&](char* base) { released.push_back(base); });
    EXPECT_TRUE(arena->holds_memory());
    EXPECT_EQ(arena->allocated_bytes(), 8192);
    StatusOr<char*> region = arena->Region(4096, 4096, "register 'x'");
    ASSERT_TRUE(region.ok());
    EXPECT_EQ(*region, memory.data() + 4096);
    EXPECT_FALSE(arena->Region(4096, 4097, "register 'y'").ok());
    EXPECT_TRUE(released.empty());
  }
  EXPECT_EQ(released, std::vector<char*>{memory.data()});
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
