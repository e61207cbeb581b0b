#include "compiler/physical/boxing_actor_count.h"

#include <algorithm>
#include <vector>

#include "compiler/physical/boxing_builder.h"

namespace softwire {
namespace compiler {

using placement::BoxingMethod;
using placement::DeviceMesh;

namespace {

// Actors a ring all-reduce over `n` members of a value of `elements` puts on each member, as
// BoxingBuilder::AllReduce cuts it.
std::vector<int> AllReduceActors(int n, int64_t elements, int64_t element_bytes) {
  const int sub_chunks = static_cast<int>(
      std::min<int64_t>(RingSubChunks(elements / n * element_bytes), elements / n));
  const int chunks = n * std::max(1, sub_chunks);
  const int per_member = chunks / n;
  std::vector<int> actors(n, 2);  // flat_split and flat_concat.
  for (int q = 0; q < chunks; ++q) {
    const int owner = q / per_member;
    const int start = (owner + 1) % n;
    for (int m = 0; m < n; ++m) {
      if (m != start) actors[m] += 2;  // The copy and add of the reduce.
      if (m != owner) actors[m] += 1;  // The copy of the gather.
    }
  }
  return actors;
}

// Adds one step's actors to each linear position of `mesh`.
void AddStep(const placement::BoxingStep& step, const DeviceMesh& mesh,
             const placement::BoxingRequest& request, std::vector<int>& actors) {
  const int axis = step.mesh_axis;
  const int n = mesh.shape[axis];
  std::vector<int> member(n, 0);
  switch (step.method) {
    case BoxingMethod::kLocalSlice:
    case BoxingMethod::kPadToPartial:
      member.assign(n, 1);
      break;
    case BoxingMethod::kAllGather:
      member.assign(n, n);
      break;
    case BoxingMethod::kReduceScatter:
    case BoxingMethod::kAllToAll:
      member.assign(n, n + 1);
      break;
    case BoxingMethod::kZeroFill:
      member.assign(n, 1);
      member[0] = 0;
      break;
    case BoxingMethod::kAllReduce: {
      placement::NdSbp whole = step.from;
      whole[axis] = placement::Sbp::Broadcast();
      int64_t elements = 1;
      for (int64_t d : placement::LocalDims(*request.dims, whole, mesh.shape)) elements *= d;
      member = AllReduceActors(n, elements, request.element_bytes);
      break;
    }
  }
  for (int at = 0; at < mesh.size(); ++at) actors[at] += member[mesh.Coordinate(at)[axis]];
}

// The general path: per destination part, as BoxingBuilder::General builds it.
int GeneralActors(const placement::BoxingPlan& plan, const placement::BoxingRequest& request) {
  const DeviceMesh& source = *request.from_mesh;
  const DeviceMesh& target = *request.to_mesh;
  int most = 0;
  for (int j = 0; j < target.size(); ++j) {
    const placement::DestinationPart& part = plan.parts[j];
    int actors = 0;
    if (part.zero) {
      actors = 1;
    } else {
      for (const placement::SourceBlock& block : part.blocks) {
        const placement::TensorBox held = placement::PartBox(
            *request.dims, request.from, source.shape, source.Coordinate(block.source));
        const bool in_place =
            block.box == held && source.devices[block.source] == target.devices[j];
        if (!in_place) ++actors;
      }
      const bool whole_block = part.blocks.size() == 1 && part.blocks[0].box == part.region;
      if (!whole_block) ++actors;
    }
    most = std::max(most, actors);
  }
  return most;
}

}  // namespace

int BoxingActorsPerDevice(const placement::BoxingPlan& plan,
                          const placement::BoxingRequest& request, bool bucketed) {
  if (!plan.needed) return 0;
  if (plan.general) return GeneralActors(plan, request);
  const DeviceMesh& mesh = *request.from_mesh;
  std::vector<int> actors(mesh.size(), 0);
  for (const placement::BoxingStep& step : plan.steps) {
    if (bucketed && step.method == BoxingMethod::kAllReduce) continue;
    AddStep(step, mesh, request, actors);
  }
  return actors.empty() ? 0 : *std::max_element(actors.begin(), actors.end());
}

}  // namespace compiler
}  // namespace softwire
