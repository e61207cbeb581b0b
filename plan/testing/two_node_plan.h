// A small valid plan over two nodes, built by hand for plan/'s tests (test-only):
//
//   node0/cpu:0 (device 0)                     node1/cpu:0 (device 1)
//   source(0) -x-> send(1) -wire------------>  recv(2) -y-> relu(3)
//   sink(4)  <-------------------------------------------------z-'
//
// Every register holds a float32 scalar in 2 slots of 4 bytes, laid out back to back in its
// device's arena; 2 steps of 1 piece, every period 1. `wire` lies on node0 and `z` on node1,
// so each node has one edge out and one edge in.
#ifndef SOFTWIRE_PLAN_TESTING_TWO_NODE_PLAN_H_
#define SOFTWIRE_PLAN_TESTING_TWO_NODE_PLAN_H_

#include "proto/plan.pb.h"

namespace softwire {
namespace plan {
namespace testing {

proto::Plan TwoNodePlan();

}  // namespace testing
}  // namespace plan
}  // namespace softwire

#endif  // SOFTWIRE_PLAN_TESTING_TWO_NODE_PLAN_H_
