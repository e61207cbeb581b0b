// The minimum round-trip clock offset estimate against a peer whose clock is skewed by a known
// amount, over a network with random, asymmetric delays.
#include "trace/clock_offset.h"

#include <gtest/gtest.h>

#include <random>

namespace softwire {
namespace trace {
namespace {

// A peer whose clock reads local + skew; requests and answers take random times.
class SkewedPeer {
 public:
  SkewedPeer(int64_t skew, uint32_t seed) : skew_(skew), random_(seed) {}

  StatusOr<ClockProbe> Probe() {
    ClockProbe probe;
    probe.sent = now_;
    now_ += Delay(/*outbound=*/true);
    probe.remote = now_ + skew_;
    now_ += Delay(/*outbound=*/false);
    probe.received = now_;
    now_ += 1000;
    return probe;
  }

 private:
  // 20-2000 us, outbound usually slower: a midpoint estimate from one probe is biased.
  int64_t Delay(bool outbound) {
    std::uniform_int_distribution<int64_t> delay(20000, outbound ? 2000000 : 600000);
    return delay(random_);
  }

  int64_t skew_;
  std::mt19937 random_;
  int64_t now_ = 1000000000;
};

TEST(ClockOffsetTest, TheEstimateIsWithinItsErrorBoundOfTheTrueSkew) {
  for (int64_t skew : {int64_t{0}, int64_t{123456789}, int64_t{-987654321}, int64_t{5}}) {
    for (uint32_t seed : {1u, 2u, 3u}) {
      SkewedPeer peer(skew, seed);
      StatusOr<ClockOffset> offset = EstimateClockOffset(16, [&peer]() { return peer.Probe(); });
      ASSERT_TRUE(offset.ok()) << offset.status();
      EXPECT_EQ(offset->probes, 16);
      EXPECT_LE(std::llabs(offset->offset_ns - skew), offset->error_ns)
          << "skew " << skew << " seed " << seed;
      EXPECT_EQ(offset->error_ns, (offset->round_trip_ns + 1) / 2);
      // The fastest of 16 probes is far better than the slowest possible one.
      EXPECT_LT(offset->error_ns, 1300000);
    }
  }
}

TEST(ClockOffsetTest, MoreProbesNeverWidenTheBound) {
  SkewedPeer few_peer(777, 9);
  SkewedPeer many_peer(777, 9);
  StatusOr<ClockOffset> few = EstimateClockOffset(2, [&]() { return few_peer.Probe(); });
  StatusOr<ClockOffset> many = EstimateClockOffset(64, [&]() { return many_peer.Probe(); });
  ASSERT_TRUE(few.ok() && many.ok());
  EXPECT_LE(many->error_ns, few->error_ns);
  EXPECT_LE(std::llabs(many->offset_ns - 777), many->error_ns);
}

TEST(ClockOffsetTest, AnExactSymmetricProbeGivesTheSkewExactly) {
  StatusOr<ClockOffset> offset = EstimateClockOffset(1, []() -> StatusOr<ClockProbe> {
    return ClockProbe{1000, 5500 + 42, 10000};  // Remote answered at the midpoint, 5500.
  });
  ASSERT_TRUE(offset.ok());
  EXPECT_EQ(offset->offset_ns, 42);
  EXPECT_EQ(offset->error_ns, 4500);
}

TEST(ClockOffsetTest, FailedProbesAreSkippedAndAllFailingIsAnError) {
  int calls = 0;
  StatusOr<ClockOffset> some = EstimateClockOffset(4, [&calls]() -> StatusOr<ClockProbe> {
    if (++calls % 2 == 1) return UnavailableError("peer gone");
    return ClockProbe{0, 50, 100};
  });
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(some->probes, 2);
  StatusOr<ClockOffset> none = EstimateClockOffset(
      3, []() -> StatusOr<ClockProbe> { return UnavailableError("peer gone"); });
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("peer gone"), std::string::npos);
  EXPECT_FALSE(EstimateClockOffset(0, []() -> StatusOr<ClockProbe> { return ClockProbe{}; }).ok());
  EXPECT_FALSE(EstimateClockOffset(1, []() -> StatusOr<ClockProbe> {
                 return ClockProbe{10, 0, 5};
               }).ok());
}

}  // namespace
}  // namespace trace
}  // namespace softwire
