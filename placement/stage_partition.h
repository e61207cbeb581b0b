// PartitionStages: cut a sequence of ops (the forward ops in topological order) into
// `stages` contiguous groups, so that the slowest stage is as fast as possible
// (docs/PARALLELISM.md, "Placement").
//
// A stage holding positions [j, i) costs the sum of their seconds (forward + backward work of
// each op, as the caller estimates it) plus cut_seconds[j], the transfer time of everything
// that crosses the boundary in front of it (none for the first stage). Pinned positions must
// land on their stage; stages never go down along the sequence, so pins must be
// non-decreasing. A stage may stay empty only when pins or a short sequence force it.
//
// Among partitions with that smallest bottleneck it returns the most even one (the smallest
// sum of squared stage costs), so that the stages the bottleneck does not decide still share
// the work, activations and weights: a min-max answer alone may leave them nearly empty.
//
// Dynamic programming over (stage, end position), O(stages * n * w) where w is the number of
// positions whose summed cost stays below the bottleneck (about n / stages); the balancing
// pass is skipped past 4e7 steps (then the min-max partition stands).
//
//   StagePartitionInput input{{0.2, 0.5, 0.1}, {0, 0.01, 0.02, 0}, {-1, -1, -1}, 2};
//   StatusOr<StagePartition> partition = PartitionStages(input);  // stage_of = {0, 1, 1}
#ifndef SOFTWIRE_PLACEMENT_STAGE_PARTITION_H_
#define SOFTWIRE_PLACEMENT_STAGE_PARTITION_H_

#include <vector>

#include "base/status.h"

namespace softwire {
namespace placement {

struct StagePartitionInput {
  std::vector<double> op_seconds;   // n: work of each position.
  std::vector<double> cut_seconds;  // n + 1: cost of a boundary in front of position i.
  std::vector<int> pinned;          // n: the stage a position must take, or -1.
  int stages = 1;
};

struct StagePartition {
  std::vector<int> stage_of;          // n.
  std::vector<double> stage_seconds;  // stages: work + incoming cut of each stage.
  double bottleneck_seconds = 0;      // The largest of stage_seconds.
};

// InvalidArgument when a pin is outside [0, stages) or pins decrease along the sequence.
StatusOr<StagePartition> PartitionStages(const StagePartitionInput& input);

}  // namespace placement
}  // namespace softwire

#endif  // SOFTWIRE_PLACEMENT_STAGE_PARTITION_H_
