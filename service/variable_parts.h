// Trained variables of a job on nodes: each node sends the parts its share holds after a run
// that completed (VariablePartChunk reports, chunked), and the server stitches them into the
// logical variables it saves with the job's results, as a run in one process does.
//
//   node:   for (proto::NodeReport& report : VariablePartReports(*hosted, run_id)) send(report);
//   server: GatheredVariables gathered;  gathered.Add(node, report.variable_part());
//           StatusOr<std::map<std::string, NpyArray>> variables = gathered.Take();
//
// Threading: VariablePartReports only while no execution of the hosted plan runs;
// GatheredVariables is not thread-safe (the cluster execution calls it under its lock).
#ifndef SOFTWIRE_SERVICE_VARIABLE_PARTS_H_
#define SOFTWIRE_SERVICE_VARIABLE_PARTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "base/npy.h"
#include "base/status.h"
#include "proto/nodes.pb.h"
#include "runtime/host/hosted_plan.h"

namespace softwire {
namespace service {

// Bytes of variable data per report.
constexpr int64_t kVariableChunkBytes = 1 << 20;

// The reports carrying every variable part `hosted` keeps in memory (one replica of a
// data-parallel variable), in chunks of at most kVariableChunkBytes.
StatusOr<std::vector<proto::NodeReport>> VariablePartReports(const runtime::HostedPlan& hosted,
                                                             int64_t run_id);

// The bytes of `plan`'s variables, whole: what the parts of a run's trained values can hold.
int64_t PlanVariableBytes(const proto::Plan& plan);

class GatheredVariables {
 public:
  // The parts together, and any variable's logical tensor, may hold at most `max_bytes`: what
  // a node claims cannot make the server allocate more than the plan's variables take.
  explicit GatheredVariables(int64_t max_bytes = int64_t{1} << 40) : max_bytes_(max_bytes) {}

  // One chunk from `node`; a part that another node sent first (a replica) is ignored.
  // InvalidArgument naming the node and variable for a chunk that does not fit (its part,
  // offset or type disagree with the chunks before it; its logical type is not a tensor, or it
  // or its part would take the held bytes past max_bytes).
  Status Add(const std::string& node, const proto::VariablePartChunk& chunk);
  // Every variable sent, whole. FailedPrecondition naming the first variable whose parts do not
  // cover it. Variables no node sent (parts on sim devices: no values) are left out.
  StatusOr<std::map<std::string, NpyArray>> Take();

 private:
  struct Part {
    std::string owner;               // The node whose copy is kept (replicas hold equal values).
    proto::VariablePartChunk first;  // Without data: the part's description.
    std::string bytes;               // Filled from the chunks.
    int64_t received = 0;
  };
  std::map<std::tuple<std::string, int32_t, int64_t, int64_t>, Part> parts_;  // By variable, slice.
  const int64_t max_bytes_;
  int64_t held_bytes_ = 0;  // Of the parts' buffers.
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_VARIABLE_PARTS_H_
