#include "placement/cost_model.h"

#include <algorithm>
#include <limits>

namespace softwire {
namespace placement {

double CostModel::ComputeSeconds(int device, double flops, double bytes, bool bf16_product) const {
  const proto::DeviceSpec& spec = cluster_.device(device).spec;
  const double rate = bf16_product ? spec.bf16_flops() : spec.flops();
  return flops / rate + bytes / spec.memory_bandwidth();
}

double CostModel::TransferSeconds(int from, int to, double bytes) const {
  if (from == to) return 0;
  const LinkFigures& link = cluster_.Link(from, to);
  return link.latency + bytes / link.bandwidth;
}

LinkFigures CostModel::RingLink(const std::vector<int>& ring) const {
  LinkFigures slowest{std::numeric_limits<double>::infinity(), 0};
  const size_t n = ring.size();
  if (n < 2) return slowest;
  for (size_t i = 0; i < n; ++i) {
    const LinkFigures& link = cluster_.Link(ring[i], ring[(i + 1) % n]);
    slowest.bandwidth = std::min(slowest.bandwidth, link.bandwidth);
    slowest.latency = std::max(slowest.latency, link.latency);
  }
  return slowest;
}

double CostModel::RingSteps(const std::vector<int>& ring, int steps, double bytes_per_step) const {
  if (steps <= 0) return 0;
  LinkFigures link = RingLink(ring);
  return steps * (link.latency + bytes_per_step / link.bandwidth);
}

double CostModel::RingAllReduceSeconds(const std::vector<int>& ring, double bytes) const {
  const int n = static_cast<int>(ring.size());
  return n < 2 ? 0 : RingSteps(ring, 2 * (n - 1), bytes / n);
}

double CostModel::AllGatherSeconds(const std::vector<int>& ring, double bytes) const {
  const int n = static_cast<int>(ring.size());
  return n < 2 ? 0 : RingSteps(ring, n - 1, bytes / n);
}

double CostModel::ReduceScatterSeconds(const std::vector<int>& ring, double bytes) const {
  const int n = static_cast<int>(ring.size());
  return n < 2 ? 0 : RingSteps(ring, n - 1, bytes / n);
}

double CostModel::AllToAllSeconds(const std::vector<int>& group, double bytes) const {
  const int n = static_cast<int>(group.size());
  return n < 2 ? 0 : RingSteps(group, n - 1, bytes / (static_cast<double>(n) * n));
}

}  // namespace placement
}  // namespace softwire
