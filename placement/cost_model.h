// CostModel: seconds for compute, transfers and collectives on a ClusterModel.
//
//   compute    flops / device flops + bytes / device memory bandwidth (deliberately the sum,
//              not a roofline: small kernels pay for launch and cache effects the model does
//              not see); a product with bf16 inputs counts its flops at the device's
//              bf16_flops instead
//   transfer   link latency + bytes / link bandwidth; nothing within one device
//   ring step  the slowest link between consecutive members of the ring (which closes)
//   all-reduce       2(n-1) ring steps of bytes/n      (reduce-scatter, then all-gather)
//   all-gather       (n-1) ring steps of bytes/n       (bytes: the gathered whole)
//   reduce-scatter   (n-1) ring steps of bytes/n       (bytes: each member's whole input)
//   all-to-all       (n-1) messages of bytes/n^2 received one after another per member
// so a collective on a small tensor pays its per-step latencies, which is what makes a ring
// all-reduce of a scalar slower than gathering it.
//   actor firing     kActorFiringSeconds of host time per firing of any actor, whatever it
//                    does (what the sbp search charges per boxing actor it adds)
//
// Borrows the ClusterModel, which must outlive it. Immutable; thread-safe.
#ifndef SOFTWIRE_PLACEMENT_COST_MODEL_H_
#define SOFTWIRE_PLACEMENT_COST_MODEL_H_

#include <vector>

#include "placement/cluster_model.h"

namespace softwire {
namespace placement {

// Host time of one actor firing beyond its kernel: bench/actor_overhead's no-op chain on the
// CAF host, 0.46 us per firing with 2 slots (BENCHMARKS.md, "Actor overhead"), rounded up.
constexpr double kActorFiringSeconds = 0.5e-6;

class CostModel {
 public:
  explicit CostModel(const ClusterModel& cluster) : cluster_(cluster) {}

  const ClusterModel& cluster() const { return cluster_; }

  // `flops` run at the device's float32 rate, or at its bf16 product rate when
  // `bf16_product` (a matmul, batch_matmul or convolution whose inputs are bf16).
  double ComputeSeconds(int device, double flops, double bytes, bool bf16_product = false) const;
  double TransferSeconds(int from, int to, double bytes) const;

  // One step of a ring over `ring` (cluster device ids, in ring order): its slowest link.
  LinkFigures RingLink(const std::vector<int>& ring) const;

  double RingAllReduceSeconds(const std::vector<int>& ring, double bytes) const;
  double AllGatherSeconds(const std::vector<int>& ring, double bytes) const;
  double ReduceScatterSeconds(const std::vector<int>& ring, double bytes) const;
  double AllToAllSeconds(const std::vector<int>& group, double bytes) const;

 private:
  double RingSteps(const std::vector<int>& ring, int steps, double bytes_per_step) const;

  const ClusterModel& cluster_;
};

}  // namespace placement
}  // namespace softwire

#endif  // SOFTWIRE_PLACEMENT_COST_MODEL_H_
