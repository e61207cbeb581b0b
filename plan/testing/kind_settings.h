// What a hand-built test plan's actor needs beside its registers, by kind, shared by the
// plan/'s PlanBuilder and the runtime's TestPlan so that both build plans DescribeActors and
// the kernels accept in the same way.
#ifndef SOFTWIRE_PLAN_TESTING_KIND_SETTINGS_H_
#define SOFTWIRE_PLAN_TESTING_KIND_SETTINGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/plan.pb.h"

namespace softwire {
namespace plan {
namespace testing {

// Variable and update actors fire once per step; every other kind once per piece.
bool FiresOncePerStep(proto::ActorKind kind);

struct KindNames {
  std::string dataset;               // A source's dataset.
  std::vector<std::string> outputs;  // A source's outputs (register names), one each.
  std::string variable;              // A variable actor's variable.
  std::string sink_output;           // A sink's output.
};

// Sets `actor`'s kind-specific message from `actor->kind()`: a source reads one float32
// synthetic sample per output (seed 1); a variable holds `names.variable` whole (no split);
// an update applies SGD with learning rate 0.1 and averages over `pieces_per_step`; a sink
// reports `names.sink_output`. Other kinds need nothing.
void SetKindSettings(const KindNames& names, int64_t pieces_per_step, proto::ActorDef* actor);

}  // namespace testing
}  // namespace plan
}  // namespace softwire

#endif  // SOFTWIRE_PLAN_TESTING_KIND_SETTINGS_H_
