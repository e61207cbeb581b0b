// The cost model's figures on a known cluster.
#include "placement/cost_model.h"

#include <gtest/gtest.h>

#include "placement/cluster_spec.h"

namespace softwire {
namespace placement {
namespace {

ClusterModel Model(const std::string& shorthand) {
  StatusOr<ClusterModel> model = ClusterModel::Build(*ParseClusterShorthand(shorthand, 8));
  CHECK(model.ok()) << model.status();
  return std::move(model).value();
}

TEST(CostModel, TimesComputeAsFlopsOverFlopRatePlusBytesOverBandwidth) {
  ClusterModel model = Model("2cpu");
  CostModel cost(model);
  // 2e9 flops at 100 GFLOP/s is 20 ms; 40 MB at 20 GB/s is 2 ms.
  EXPECT_DOUBLE_EQ(cost.ComputeSeconds(0, 2e9, 40e6), 0.022);
}

TEST(CostModel, RunsBf16ProductsAtTheDevicesBf16Rate) {
  ClusterModel model = Model("2sim");
  CostModel cost(model);
  // A sim device has native bf16: its products run at twice its 100 TFLOP/s; the bytes are
  // timed as before.
  EXPECT_DOUBLE_EQ(model.device(0).spec.bf16_flops(), 200e12);
  EXPECT_DOUBLE_EQ(cost.ComputeSeconds(0, 2e12, 2e12, /*bf16_product=*/true), 0.01 + 1.0);
  EXPECT_DOUBLE_EQ(cost.ComputeSeconds(0, 2e12, 2e12, /*bf16_product=*/false), 0.02 + 1.0);
}

TEST(CostModel, TakesAClustersOwnBf16RateAndRefusesANegativeOne) {
  proto::Cluster cluster = *ParseClusterShorthand("1cpu", 8);
  cluster.mutable_node(0)->mutable_device(0)->set_bf16_flops(300e9);
  StatusOr<ClusterModel> model = ClusterModel::Build(cluster);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_DOUBLE_EQ(CostModel(*model).ComputeSeconds(0, 3e9, 0, true), 0.01);
  cluster.mutable_node(0)->mutable_device(0)->set_bf16_flops(-1);
  EXPECT_NE(ClusterModel::Build(cluster).status().message().find("negative flops, bf16_flops"),
            std::string::npos);
}

TEST(CostModel, TimesATransferAsLatencyPlusBytesOverTheLinkAndNothingOnOneDevice) {
  ClusterModel model = Model("2x2sim");
  CostModel cost(model);
  EXPECT_DOUBLE_EQ(cost.TransferSeconds(0, 1, 1e6), 2e-6 + 1e6 / 50e9);
  EXPECT_DOUBLE_EQ(cost.TransferSeconds(1, 2, 1e6), 20e-6 + 1e6 / 10e9);
  EXPECT_EQ(cost.TransferSeconds(3, 3, 1e6), 0);
}

TEST(CostModel, PaysTwoTimesNMinusOneLatenciesForARingAllReduce) {
  ClusterModel model = Model("4sim");
  CostModel cost(model);
  const std::vector<int> ring = {0, 1, 2, 3};
  // 6 steps of 1/4 of 4 MB each.
  EXPECT_DOUBLE_EQ(cost.RingAllReduceSeconds(ring, 4e6), 6 * (2e-6 + 1e6 / 50e9));
  EXPECT_DOUBLE_EQ(cost.AllGatherSeconds(ring, 4e6), 3 * (2e-6 + 1e6 / 50e9));
  EXPECT_DOUBLE_EQ(cost.ReduceScatterSeconds(ring, 4e6), 3 * (2e-6 + 1e6 / 50e9));
  EXPECT_DOUBLE_EQ(cost.AllToAllSeconds(ring, 4e6), 3 * (2e-6 + 0.25e6 / 50e9));
  // A scalar's all-reduce is almost all latency.
  EXPECT_NEAR(cost.RingAllReduceSeconds(ring, 4), 12e-6, 1e-9);
  EXPECT_EQ(cost.RingAllReduceSeconds({2}, 4e6), 0);
}

TEST(CostModel, RunsARingAtTheSpeedOfItsSlowestLink) {
  ClusterModel model = Model("2x2sim");
  CostModel cost(model);
  LinkFigures link = cost.RingLink({0, 1, 2, 3});
  EXPECT_DOUBLE_EQ(link.bandwidth, 10e9);
  EXPECT_DOUBLE_EQ(link.latency, 20e-6);
  EXPECT_DOUBLE_EQ(cost.RingLink({0, 1}).bandwidth, 50e9);
}

}  // namespace
}  // namespace placement
}  // namespace softwire
