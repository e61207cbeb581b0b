// A plan moves onto other devices of its kinds by renaming its device list; it refuses targets
// that could not hold it.
#include "plan/device_assignment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plan/labels.h"
#include "plan/plan_invariants.h"
#include "plan/testing/two_node_plan.h"

namespace softwire {
namespace plan {
namespace {

using ::testing::HasSubstr;

proto::PlanDevice Target(const proto::PlanDevice& like, const std::string& node,
                         const std::string& name) {
  proto::PlanDevice target = like;
  target.set_node(node);
  target.set_name(name);
  target.set_cores(3);
  return target;
}

TEST(DeviceAssignmentTest, AssignedDevicesTakeTheTargetsNamesAndKeepIdsAndActors) {
  proto::Plan plan = testing::TwoNodePlan();
  ASSERT_EQ(plan.device_size(), 2);
  const proto::Plan before = plan;
  Status assigned = AssignDevices(
      {Target(plan.device(0), "node0", "cpu:5"), Target(plan.device(1), "node0", "cpu:2")}, &plan);
  ASSERT_TRUE(assigned.ok()) << assigned;
  EXPECT_EQ(DeviceName(plan.device(0)), "node0/cpu:5");
  EXPECT_EQ(DeviceName(plan.device(1)), "node0/cpu:2");
  EXPECT_EQ(plan.device(1).cores(), 3);
  EXPECT_EQ(plan.device(1).id(), before.device(1).id());
  EXPECT_EQ(plan.device(1).planned_bytes(), before.device(1).planned_bytes());
  ASSERT_EQ(plan.actor_size(), before.actor_size());
  for (int i = 0; i < plan.actor_size(); ++i) {
    EXPECT_EQ(plan.actor(i).device(), before.actor(i).device());
  }
  EXPECT_TRUE(CheckPlanInvariants(plan).ok()) << CheckPlanInvariants(plan);
}

TEST(DeviceAssignmentTest, RefusesAWrongCountATargetTwiceAndATargetTooSmall) {
  proto::Plan plan = testing::TwoNodePlan();
  const proto::Plan before = plan;
  Status count = AssignDevices({Target(plan.device(0), "node0", "cpu:1")}, &plan);
  EXPECT_THAT(count.message(), HasSubstr("the plan has 2 devices but 1 were assigned"));
  Status twice = AssignDevices(
      {Target(plan.device(0), "node0", "cpu:1"), Target(plan.device(1), "node0", "cpu:1")}, &plan);
  EXPECT_THAT(twice.message(), HasSubstr("assigned twice"));
  proto::PlanDevice small = Target(plan.device(1), "node0", "cpu:3");
  plan.mutable_device(1)->set_planned_bytes(1000);
  small.set_memory_budget(10);
  Status too_small = AssignDevices({Target(plan.device(0), "node0", "cpu:1"), small}, &plan);
  EXPECT_EQ(too_small.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(too_small.message(), HasSubstr("the plan needs 1000"));
  EXPECT_EQ(DeviceName(plan.device(0)), DeviceName(before.device(0)));
}

}  // namespace
}  // namespace plan
}  // namespace softwire
