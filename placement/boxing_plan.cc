#include "placement/boxing_plan.h"

#include <algorithm>
#include <limits>

namespace softwire {
namespace placement {
namespace {

const char* const kAxisNames[kMeshAxes] = {"dp", "tp"};

double Bytes(const std::vector<int64_t>& dims, int64_t element_bytes) {
  double bytes = static_cast<double>(element_bytes);
  for (int64_t d : dims) bytes *= static_cast<double>(d);
  return bytes;
}

// Devices of the group along `axis` that holds `other` on the other axis, in ring order.
std::vector<int> Group(const DeviceMesh& mesh, int axis, int other) {
  std::vector<int> ring;
  for (int i = 0; i < mesh.shape[axis]; ++i) {
    MeshCoordinate coordinate;
    coordinate[axis] = i;
    coordinate[1 - axis] = other;
    ring.push_back(mesh.devices[mesh.Linear(coordinate)]);
  }
  return ring;
}

// A step along `axis` is clean unless the other (inner) axis splits the tensor axis this step
// splits or gathers: then a group's parts are interleaved, not one contiguous view.
bool IsClean(const NdSbp& from, const NdSbp& to, int axis) {
  const Sbp& other = from[1 - axis];
  if (!other.is_split() || axis != 0) return true;
  auto splits_same = [&](const Sbp& s) { return s.is_split() && s.axis == other.axis; };
  return !splits_same(from[axis]) && !splits_same(to[axis]);
}

// A ring all-reduce cuts the group's value into one chunk per member.
bool RingCanChunk(const std::vector<int64_t>& dims, const NdSbp& sbp, const MeshShape& shape,
                  int axis) {
  int64_t elements = 1;
  for (int64_t d : LocalDims(dims, sbp, shape)) elements *= d;
  return elements >= shape[axis];
}

// Seconds of one step on every group (groups run at once; the slowest counts).
double StepSeconds(const CostModel& cost, const DeviceMesh& mesh, const BoxingStep& step,
                   const std::vector<int64_t>& dims, int64_t element_bytes) {
  const int axis = step.mesh_axis;
  const int n = mesh.shape[axis];
  // The group's whole value: the layout with this axis broadcast.
  NdSbp group_view = step.from;
  group_view[axis] = Sbp::Broadcast();
  const double group_bytes = Bytes(LocalDims(dims, group_view, mesh.shape), element_bytes);
  const double elements = group_bytes / static_cast<double>(element_bytes);
  double slowest = 0;
  for (int other = 0; other < mesh.shape[1 - axis]; ++other) {
    std::vector<int> ring = Group(mesh, axis, other);
    const int device = ring.front();
    double seconds = 0;
    switch (step.method) {
      case BoxingMethod::kLocalSlice:
        seconds = cost.ComputeSeconds(device, 0, 2 * group_bytes / n);
        break;
      case BoxingMethod::kAllGather:
        seconds = cost.AllGatherSeconds(ring, group_bytes) +
                  cost.ComputeSeconds(device, 0, 2 * group_bytes);
        break;
      case BoxingMethod::kAllReduce:
        seconds = cost.RingAllReduceSeconds(ring, group_bytes) +
                  cost.ComputeSeconds(device, elements, 7 * group_bytes);
        break;
      case BoxingMethod::kReduceScatter:
        seconds = cost.ReduceScatterSeconds(ring, group_bytes) +
                  cost.ComputeSeconds(device, elements / n, 5 * group_bytes / n + group_bytes);
        break;
      case BoxingMethod::kAllToAll:
        seconds = cost.AllToAllSeconds(ring, group_bytes) +
                  cost.ComputeSeconds(device, 0, 3 * group_bytes / n);
        break;
      case BoxingMethod::kZeroFill:
        seconds = cost.ComputeSeconds(device, 0, group_bytes);
        break;
      case BoxingMethod::kPadToPartial:
        seconds = cost.ComputeSeconds(device, 0, group_bytes + group_bytes / n);
        break;
    }
    slowest = std::max(slowest, seconds);
  }
  return slowest;
}

// The general path: every destination part from the source blocks that overlap it.
BoxingPlan GeneralPlan(const CostModel& cost, const BoxingRequest& request, const NdSbp& from,
                       const NdSbp& to) {
  const DeviceMesh& source = *request.from_mesh;
  const DeviceMesh& target = *request.to_mesh;
  const std::vector<int64_t>& dims = *request.dims;
  BoxingPlan plan;
  plan.needed = true;
  plan.general = true;
  plan.parts.resize(target.size());
  for (int j = 0; j < target.size(); ++j) {
    const MeshCoordinate at = target.Coordinate(j);
    const int device = target.devices[j];
    DestinationPart& part = plan.parts[j];
    part.region = PartBox(dims, to, target.shape, at);
    const double region_bytes =
        static_cast<double>(part.region.NumElements() * request.element_bytes);
    for (int k = 0; k < kMeshAxes; ++k) part.zero |= to[k].is_partial() && at[k] != 0;
    if (part.zero) {
      plan.seconds = std::max(plan.seconds, cost.ComputeSeconds(device, 0, region_bytes));
      continue;
    }
    // Candidate coordinates per source axis: every one for S and P, the nearest replica for B.
    const int own = source.IndexOf(device);
    std::array<std::vector<int>, kMeshAxes> candidates;
    for (int k = 0; k < kMeshAxes; ++k) {
      if (!from[k].is_broadcast()) {
        for (int c = 0; c < source.shape[k]; ++c) candidates[k].push_back(c);
      } else if (own >= 0) {
        candidates[k].push_back(source.Coordinate(own)[k]);
      } else if (source.shape[k] == target.shape[k]) {
        candidates[k].push_back(at[k]);
      } else {
        candidates[k].push_back(j % source.shape[k]);
      }
    }
    double incoming = 0;
    for (int c0 : candidates[0]) {
      for (int c1 : candidates[1]) {
        const int index = source.Linear({c0, c1});
        TensorBox box = Intersect(part.region, PartBox(dims, from, source.shape, {c0, c1}));
        if (box.empty()) continue;
        incoming +=
            cost.TransferSeconds(source.devices[index], device,
                                 static_cast<double>(box.NumElements() * request.element_bytes));
        part.blocks.push_back({index, std::move(box)});
      }
    }
    const bool assembled = part.blocks.size() != 1 || !(part.blocks[0].box == part.region);
    if (assembled) incoming += cost.ComputeSeconds(device, 0, 2 * region_bytes);
    plan.seconds = std::max(plan.seconds, incoming);
  }
  return plan;
}

// Same mesh: one step per differing axis, in the cheaper valid order; nullopt-like empty plan
// (general false, no steps) when no order is clean.
bool PlanSteps(const CostModel& cost, const BoxingRequest& request, const NdSbp& from,
               const NdSbp& to, BoxingPlan* plan) {
  const DeviceMesh& mesh = *request.from_mesh;
  std::vector<int> differing;
  for (int k = 0; k < kMeshAxes; ++k) {
    if (from[k] != to[k]) differing.push_back(k);
  }
  std::vector<std::vector<int>> orders = {differing};
  if (differing.size() == 2) orders.push_back({differing[1], differing[0]});
  double best = std::numeric_limits<double>::infinity();
  for (const std::vector<int>& order : orders) {
    std::vector<BoxingStep> steps;
    NdSbp current = from;
    double seconds = 0;
    bool valid = true;
    for (int axis : order) {
      NdSbp next = current;
      next[axis] = to[axis];
      if (!IsClean(current, next, axis) || !SplitsEvenly(*request.dims, next, mesh.shape)) {
        valid = false;
        break;
      }
      BoxingStep step{MethodFor(current[axis], next[axis]), axis, current, next};
      if (step.method == BoxingMethod::kAllReduce &&
          !RingCanChunk(*request.dims, current, mesh.shape, axis)) {
        valid = false;  // Fewer elements than ring members: gather and sum instead.
        break;
      }
      seconds += StepSeconds(cost, mesh, step, *request.dims, request.element_bytes);
      steps.push_back(step);
      current = next;
    }
    if (valid && seconds < best) {
      best = seconds;
      plan->steps = std::move(steps);
      plan->seconds = seconds;
    }
  }
  return best < std::numeric_limits<double>::infinity();
}

}  // namespace

const char* BoxingMethodName(BoxingMethod method) {
  switch (method) {
    case BoxingMethod::kLocalSlice:
      return "slice";
    case BoxingMethod::kAllGather:
      return "all_gather";
    case BoxingMethod::kAllReduce:
      return "all_reduce";
    case BoxingMethod::kReduceScatter:
      return "reduce_scatter";
    case BoxingMethod::kAllToAll:
      return "all_to_all";
    case BoxingMethod::kZeroFill:
      return "zero_fill";
    case BoxingMethod::kPadToPartial:
      return "pad";
  }
  return "?";
}

BoxingMethod MethodFor(const Sbp& from, const Sbp& to) {
  CHECK(from != to) << "no boxing from " << from.ToString() << " to itself";
  if (from.is_broadcast())
    return to.is_split() ? BoxingMethod::kLocalSlice : BoxingMethod::kZeroFill;
  if (from.is_partial())
    return to.is_split() ? BoxingMethod::kReduceScatter : BoxingMethod::kAllReduce;
  if (to.is_broadcast()) return BoxingMethod::kAllGather;
  if (to.is_partial()) return BoxingMethod::kPadToPartial;
  return BoxingMethod::kAllToAll;
}

std::string BoxingPlan::Describe() const {
  if (!needed) return "none";
  if (general) return "general";
  std::string text;
  for (const BoxingStep& step : steps) {
    text += (text.empty() ? "" : ", then ") + std::string(BoxingMethodName(step.method)) +
            " over " + kAxisNames[step.mesh_axis];
  }
  return text;
}

BoxingPlan PlanGradientSync(const CostModel& cost, const BoxingRequest& request) {
  const DeviceMesh& mesh = *request.from_mesh;
  const NdSbp from = Normalized(request.from, mesh.shape);
  const NdSbp to = Normalized(request.to, request.to_mesh->shape);
  BoxingPlan plan;
  plan.general = true;  // "Does not apply" until the steps are built.
  if (!(*request.from_mesh == *request.to_mesh) || HasPartial(to)) return plan;
  if (from == to) {
    plan.general = false;
    return plan;
  }
  std::vector<BoxingStep> pads;
  std::vector<BoxingStep> reduces;
  std::vector<BoxingStep> slices;
  NdSbp current = from;
  auto add = [&](std::vector<BoxingStep>* steps, int axis, Sbp next) {
    NdSbp after = current;
    after[axis] = next;
    steps->push_back({MethodFor(current[axis], next), axis, current, after});
    current = after;
  };
  for (int k = 0; k < kMeshAxes; ++k) {
    if (from[k] != to[k] && from[k].is_split()) add(&pads, k, Sbp::Partial());
  }
  for (int k = 0; k < kMeshAxes; ++k) {
    if (current[k].is_partial()) add(&reduces, k, Sbp::Broadcast());
  }
  for (int k = 0; k < kMeshAxes; ++k) {
    if (current[k] != to[k]) add(&slices, k, to[k]);
  }
  std::vector<BoxingStep> steps = pads;
  steps.insert(steps.end(), reduces.begin(), reduces.end());
  steps.insert(steps.end(), slices.begin(), slices.end());
  for (const BoxingStep& step : steps) {
    if (!IsClean(step.from, step.to, step.mesh_axis) ||
        !SplitsEvenly(*request.dims, step.to, mesh.shape)) {
      return plan;
    }
    if (step.method == BoxingMethod::kAllReduce &&
        !RingCanChunk(*request.dims, step.from, mesh.shape, step.mesh_axis)) {
      return plan;
    }
  }
  plan.general = false;
  plan.needed = true;
  for (const BoxingStep& step : steps) {
    plan.seconds += StepSeconds(cost, mesh, step, *request.dims, request.element_bytes);
  }
  plan.steps = std::move(steps);
  return plan;
}

BoxingPlan PlanBoxing(const CostModel& cost, const BoxingRequest& request) {
  const NdSbp from = Normalized(request.from, request.from_mesh->shape);
  const NdSbp to = Normalized(request.to, request.to_mesh->shape);
  const bool same_mesh =
      request.from_mesh == request.to_mesh || *request.from_mesh == *request.to_mesh;
  BoxingPlan plan;
  if (same_mesh) {
    if (from == to) return plan;
    plan.needed = true;
    if (PlanSteps(cost, request, from, to, &plan)) return plan;
  }
  return GeneralPlan(cost, request, from, to);
}

}  // namespace placement
}  // namespace softwire
