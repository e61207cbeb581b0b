// ClusterModel: defaults, the link table, and the errors a bad cluster gets.
#include "placement/cluster_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "placement/cluster_spec.h"

namespace softwire {
namespace placement {
namespace {

using ::testing::HasSubstr;

ClusterModel Build(const proto::Cluster& cluster) {
  StatusOr<ClusterModel> model = ClusterModel::Build(cluster);
  CHECK(model.ok()) << model.status();
  return std::move(model).value();
}

TEST(ClusterModel, FillsEachKindsDefaultsWhereTheClusterLeavesZero) {
  ClusterModel cpus = Build(*ParseClusterShorthand("2cpu", 8));
  EXPECT_EQ(cpus.device_count(), 2);
  EXPECT_EQ(cpus.device(1).FullName(), "node0/cpu:1");
  EXPECT_DOUBLE_EQ(cpus.device(0).spec.flops(), 100e9);
  EXPECT_DOUBLE_EQ(cpus.device(0).spec.memory_bandwidth(), 20e9);
  EXPECT_EQ(cpus.device(0).spec.memory_bytes(), 0);  // Unlimited.
  EXPECT_EQ(cpus.device(0).spec.cores(), 4);

  ClusterModel sims = Build(*ParseClusterShorthand("1sim", 8));
  EXPECT_DOUBLE_EQ(sims.device(0).spec.flops(), 100e12);
  EXPECT_DOUBLE_EQ(sims.device(0).spec.memory_bandwidth(), 2e12);
  EXPECT_EQ(sims.device(0).spec.memory_bytes(), int64_t{16} << 30);
}

TEST(ClusterModel, UsesIntraNodeLinksWithinANodeAndInterNodeLinksBetweenNodes) {
  ClusterModel model = Build(*ParseClusterShorthand("2x2sim", 8));
  EXPECT_DOUBLE_EQ(model.Link(0, 1).bandwidth, 50e9);
  EXPECT_DOUBLE_EQ(model.Link(0, 1).latency, 2e-6);
  EXPECT_DOUBLE_EQ(model.Link(1, 2).bandwidth, 10e9);
  EXPECT_DOUBLE_EQ(model.Link(3, 0).latency, 20e-6);
  EXPECT_TRUE(std::isinf(model.Link(2, 2).bandwidth));
  EXPECT_EQ(model.Link(2, 2).latency, 0);
}

TEST(ClusterModel, ListedLinksOverrideDefaultsForDevicesAndWholeNodes) {
  proto::Cluster cluster = *ParseClusterShorthand("2x2cpu", 4);
  proto::LinkSpec* fast = cluster.add_link();
  fast->set_from("node0/cpu:0");
  fast->set_to("node0/cpu:1");
  fast->set_bandwidth(1e12);
  fast->set_latency(1e-7);
  proto::LinkSpec* slow = cluster.add_link();
  slow->set_from("node0");
  slow->set_to("node1");
  slow->set_bandwidth(1e9);
  slow->set_latency(1e-4);
  cluster.mutable_default_intra_node_link()->set_bandwidth(25e9);
  ClusterModel model = Build(cluster);
  EXPECT_DOUBLE_EQ(model.Link(1, 0).bandwidth, 1e12);
  EXPECT_DOUBLE_EQ(model.Link(0, 3).bandwidth, 1e9);
  EXPECT_DOUBLE_EQ(model.Link(3, 1).latency, 1e-4);
  EXPECT_DOUBLE_EQ(model.Link(2, 3).bandwidth, 25e9);  // The given intra-node default.
  EXPECT_DOUBLE_EQ(model.Link(2, 3).latency, 2e-6);    // Its unset latency keeps the default.
}

TEST(ClusterModel, RejectsDuplicateDevicesUnknownLinkEndsAndMissingKinds) {
  proto::Cluster twice = *ParseClusterShorthand("2cpu", 2);
  twice.mutable_node(0)->mutable_device(1)->set_name("cpu:0");
  EXPECT_THAT(ClusterModel::Build(twice).status().message(),
              HasSubstr("device 'node0/cpu:0' is listed twice"));

  proto::Cluster unknown = *ParseClusterShorthand("2cpu", 2);
  proto::LinkSpec* link = unknown.add_link();
  link->set_from("node0/cpu:0");
  link->set_to("node7");
  link->set_bandwidth(1e9);
  EXPECT_THAT(ClusterModel::Build(unknown).status().message(),
              HasSubstr("link end 'node7' names no node and no device"));

  proto::Cluster kindless = *ParseClusterShorthand("1cpu", 2);
  kindless.mutable_node(0)->mutable_device(0)->set_kind(proto::DEVICE_KIND_UNSPECIFIED);
  EXPECT_EQ(ClusterModel::Build(kindless).status().message(),
            "cluster: device 'node0/cpu:0' has no kind");
}

}  // namespace
}  // namespace placement
}  // namespace softwire
