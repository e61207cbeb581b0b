// Messages name actors, registers and devices one way everywhere.
#include "plan/labels.h"

#include <gtest/gtest.h>

namespace softwire {
namespace plan {
namespace {

TEST(LabelsTest, NamesActorsAndRegistersWithOrWithoutTheirId) {
  proto::ActorDef actor;
  actor.set_name("relu");
  actor.set_id(2);
  EXPECT_EQ(ActorLabel(actor), "actor 'relu' (2)");
  EXPECT_EQ(ActorLabel("relu"), "actor 'relu'");
  proto::RegisterDef register_def;
  register_def.set_name("x");
  EXPECT_EQ(RegisterLabel(register_def), "register 'x' (0)");
  EXPECT_EQ(RegisterLabel("x"), "register 'x'");
  EXPECT_EQ(RegisterLabel("x", 7), "register 'x' (7)");
}

TEST(LabelsTest, NamesActorKindsInLowerCase) {
  EXPECT_STREQ(ActorKindName(proto::ACTOR_KIND_SOURCE), "source");
  EXPECT_STREQ(ActorKindName(proto::ACTOR_KIND_ACCUMULATE), "accumulate");
  EXPECT_STREQ(ActorKindName(proto::ACTOR_KIND_BOXING), "boxing");
  EXPECT_STREQ(ActorKindName(proto::ACTOR_KIND_UNSPECIFIED), "unspecified");
  EXPECT_STREQ(ActorKindName(static_cast<proto::ActorKind>(42)), "unknown");
}

TEST(LabelsTest, NamesDeviceKindsInLowerCase) {
  EXPECT_STREQ(DeviceKindName(proto::DEVICE_KIND_CPU), "cpu");
  EXPECT_STREQ(DeviceKindName(proto::DEVICE_KIND_SIM), "sim");
  EXPECT_STREQ(DeviceKindName(proto::DEVICE_KIND_CUDA), "cuda");
  EXPECT_STREQ(DeviceKindName(proto::DEVICE_KIND_UNSPECIFIED), "unspecified");
  EXPECT_STREQ(DeviceKindName(static_cast<proto::DeviceKind>(42)), "unknown");
}

TEST(LabelsTest, NamesADeviceByNodeAndName) {
  proto::PlanDevice device;
  device.set_id(1);
  device.set_node("node0");
  device.set_name("cpu:0");
  EXPECT_EQ(DeviceName(device), "node0/cpu:0");
  EXPECT_EQ(DeviceLabel(device), "device 1 (node0/cpu:0)");
  device.clear_node();
  EXPECT_EQ(DeviceName(device), "cpu:0");
}

TEST(LabelsTest, NamesADevicesKernelThreadsShortly) {
  proto::PlanDevice device;
  device.set_node("node0");
  device.set_name("cpu:0");
  EXPECT_EQ(DeviceThreadName(device, 1), "sw:cpu0/k1");
  device.set_node("node12");
  EXPECT_EQ(DeviceThreadName(device, 0), "sw:n12cpu0/k0");
  device.clear_node();
  EXPECT_EQ(DeviceThreadName(device, 3), "sw:cpu0/k3");
  device.set_node("worker-a");
  EXPECT_EQ(DeviceThreadName(device, 1).rfind("sw:worker-acpu0", 0), 0u);
}

}  // namespace
}  // namespace plan
}  // namespace softwire
