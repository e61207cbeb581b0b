// Cluster shorthands and cluster files.
#include "placement/cluster_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace softwire {
namespace placement {
namespace {

using ::testing::HasSubstr;

TEST(ParseClusterShorthand, GivesOneNodeOfFourCpusSharingTheMachinesCores) {
  StatusOr<proto::Cluster> cluster = ParseClusterShorthand("4cpu", 8);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_EQ(cluster->node_size(), 1);
  EXPECT_EQ(cluster->node(0).name(), "node0");
  ASSERT_EQ(cluster->node(0).device_size(), 4);
  EXPECT_EQ(cluster->node(0).device(3).name(), "cpu:3");
  EXPECT_EQ(cluster->node(0).device(3).kind(), proto::DEVICE_KIND_CPU);
  EXPECT_EQ(cluster->node(0).device(3).cores(), 2);
  EXPECT_EQ(cluster->node(0).device(3).memory_bytes(), 0);
  // Never fewer than one thread per device.
  EXPECT_EQ(ParseClusterShorthand("4cpu", 2)->node(0).device(0).cores(), 1);
}

TEST(ParseClusterShorthand, GivesTwoNodesOfFourDevicesForTwoXFour) {
  StatusOr<proto::Cluster> cluster = ParseClusterShorthand("2x4cpu", 8);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_EQ(cluster->node_size(), 2);
  EXPECT_EQ(cluster->node(1).name(), "node1");
  EXPECT_EQ(cluster->node(1).device_size(), 4);
  EXPECT_EQ(cluster->node(1).device(0).name(), "cpu:0");
  EXPECT_EQ(cluster->node(1).device(0).cores(), 2);
}

TEST(ParseClusterShorthand, GivesSimDevicesWithTheMemoryAfterTheColon) {
  StatusOr<proto::Cluster> eight = ParseClusterShorthand("8sim", 2);
  ASSERT_TRUE(eight.ok()) << eight.status();
  EXPECT_EQ(eight->node(0).device_size(), 8);
  EXPECT_EQ(eight->node(0).device(7).name(), "sim:7");
  EXPECT_EQ(eight->node(0).device(7).kind(), proto::DEVICE_KIND_SIM);

  StatusOr<proto::Cluster> sized = ParseClusterShorthand("2x4sim:16GiB", 2);
  ASSERT_TRUE(sized.ok()) << sized.status();
  EXPECT_EQ(sized->node_size(), 2);
  EXPECT_EQ(sized->node(1).device(3).memory_bytes(), int64_t{16} << 30);
}

TEST(ParseClusterShorthand, NamesWhatIsWrongWithABadShorthand) {
  EXPECT_THAT(ParseClusterShorthand("cpu", 2).status().message(),
              HasSubstr("cluster 'cpu': it must start with a device count >= 1"));
  EXPECT_THAT(ParseClusterShorthand("4gpu", 2).status().message(),
              HasSubstr("unknown device kind 'gpu' (cpu, sim or cuda)"));
  EXPECT_THAT(ParseClusterShorthand("2x", 2).status().message(),
              HasSubstr("a device count >= 1 must follow 'x'"));
  EXPECT_THAT(ParseClusterShorthand("4sim:16GB2", 2).status().message(), HasSubstr("unknown unit"));
  EXPECT_EQ(ParseClusterShorthand("0cpu", 2).status().code(), StatusCode::kInvalidArgument);
}

TEST(ParseByteSize, ReadsBinaryAndDecimalUnits) {
  EXPECT_EQ(*ParseByteSize("512"), 512);
  EXPECT_EQ(*ParseByteSize("64KiB"), 64 * 1024);
  EXPECT_EQ(*ParseByteSize("3MiB"), 3 * 1024 * 1024);
  EXPECT_EQ(*ParseByteSize("2GB"), 2000000000);
  EXPECT_FALSE(ParseByteSize("GiB").ok());
}

TEST(ParseClusterText, ReadsAClusterFileAndPointsAtTheLineOfASyntaxError) {
  StatusOr<proto::Cluster> cluster = ParseClusterText(
      "node { name: \"a\" device { name: \"sim:0\" kind: DEVICE_KIND_SIM } }\n"
      "default_inter_node_link { bandwidth: 1e9 }\n",
      "c.pbtxt");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ(cluster->node(0).device(0).kind(), proto::DEVICE_KIND_SIM);
  Status bad = ParseClusterText("node { name: \"a\" }\nnodes { }\n", "c.pbtxt").status();
  EXPECT_THAT(bad.message(), HasSubstr("c.pbtxt:2:"));
}

}  // namespace
}  // namespace placement
}  // namespace softwire
