#include "placement/stage_partition.h"

#include <algorithm>
#include <limits>

namespace softwire {
namespace placement {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// What a partition of positions [0, i) into stages 0..k costs, built stage by stage:
// - kBottleneck: the largest stage cost (min-max, the figure that sets the pipeline's pace);
// - kEvenUnderBound: the sum of squared stage costs, every stage at most `bound` (the most even
//   partition that keeps a given bottleneck). The min-max solution is indifferent to every
//   stage but the slowest (one expensive op or cut, and the rest may land anywhere); balancing
//   them spreads the work, the activations and the weights.
enum class Objective { kBottleneck, kEvenUnderBound };

// best[k][i]: the smallest cost of positions [0, i) on stages 0..k, stage k ending at i
// (infinity where none fits); start[k][i]: where stage k begins in that solution.
struct Table {
  std::vector<std::vector<double>> best;
  std::vector<std::vector<int>> start;
};

Table Solve(const StagePartitionInput& input, const std::vector<double>& prefix, bool allow_empty,
            Objective objective, double bound = kInfinity) {
  const int n = static_cast<int>(input.op_seconds.size());
  const int stages = input.stages;
  const bool even = objective == Objective::kEvenUnderBound;
  Table table;
  table.best.assign(stages, std::vector<double>(n + 1, kInfinity));
  table.start.assign(stages, std::vector<int>(n + 1, -1));
  for (int k = 0; k < stages; ++k) {
    for (int i = 0; i <= n; ++i) {
      double& best = table.best[k][i];
      int& start = table.start[k][i];
      if (allow_empty) {  // Stage k holds nothing.
        double before = k == 0 ? (i == 0 ? 0 : kInfinity) : table.best[k - 1][i];
        if (before < best) {
          best = before;
          start = i;
        }
      }
      for (int j = i - 1; j >= 0; --j) {
        if (input.pinned[j] >= 0 && input.pinned[j] != k) break;
        const double work = prefix[i] - prefix[j];
        // Longer stages only cost more: stop at the best found, or past the bound.
        if (even ? work > bound : work >= best) break;
        double before = k == 0 ? (j == 0 ? 0 : kInfinity) : table.best[k - 1][j];
        if (before == kInfinity) continue;
        const double stage = work + (j > 0 ? input.cut_seconds[j] : 0);
        if (even && stage > bound) continue;
        const double cost = even ? before + stage * stage : std::max(before, stage);
        if (cost < best) {
          best = cost;
          start = j;
        }
      }
    }
  }
  return table;
}

// The number of (stage, end, start) triples the balancing pass visits: every start whose work stays
// within `bound`, for every end and stage.
double BalanceSteps(const std::vector<double>& prefix, int stages, double bound) {
  const int n = static_cast<int>(prefix.size()) - 1;
  double steps = 0;
  int j = 0;
  for (int i = 0; i <= n; ++i) {
    while (prefix[i] - prefix[j] > bound) ++j;
    steps += i - j;
  }
  return steps * stages;
}

// Past this many steps balancing is skipped (it would cost more than the compile-time budget
// allows); the min-max partition stands.
constexpr double kMaxBalanceSteps = 4e7;

}  // namespace

StatusOr<StagePartition> PartitionStages(const StagePartitionInput& input) {
  const int n = static_cast<int>(input.op_seconds.size());
  CHECK_GE(input.stages, 1);
  CHECK_EQ(input.cut_seconds.size(), static_cast<size_t>(n + 1));
  CHECK_EQ(input.pinned.size(), static_cast<size_t>(n));
  int last_pin = 0;
  for (int i = 0; i < n; ++i) {
    const int pin = input.pinned[i];
    if (pin < 0) continue;
    if (pin >= input.stages) {
      return InvalidArgumentError("position " + std::to_string(i) + " is pinned to stage " +
                                  std::to_string(pin) + " but there are " +
                                  std::to_string(input.stages) + " stages");
    }
    if (pin < last_pin) {
      return InvalidArgumentError("position " + std::to_string(i) + " is pinned to stage " +
                                  std::to_string(pin) + " after a position pinned to stage " +
                                  std::to_string(last_pin));
    }
    last_pin = pin;
  }
  std::vector<double> prefix(n + 1, 0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + input.op_seconds[i];

  bool allow_empty = false;
  Table table = Solve(input, prefix, allow_empty, Objective::kBottleneck);
  if (table.best[input.stages - 1][n] == kInfinity) {
    allow_empty = true;
    table = Solve(input, prefix, allow_empty, Objective::kBottleneck);
  }
  CHECK(table.best[input.stages - 1][n] < kInfinity) << "monotone pins always fit";
  // Then the most even partition under that bottleneck (a hair of slack for rounding).
  const double bound = table.best[input.stages - 1][n] * (1 + 1e-12);
  if (input.stages > 1 && BalanceSteps(prefix, input.stages, bound) <= kMaxBalanceSteps) {
    Table balanced = Solve(input, prefix, allow_empty, Objective::kEvenUnderBound, bound);
    if (balanced.best[input.stages - 1][n] < kInfinity) table = std::move(balanced);
  }

  StagePartition partition;
  partition.stage_of.assign(n, 0);
  partition.stage_seconds.assign(input.stages, 0);
  int end = n;
  for (int k = input.stages - 1; k >= 0; --k) {
    const int begin = table.start[k][end];
    for (int i = begin; i < end; ++i) partition.stage_of[i] = k;
    if (end > begin) {
      partition.stage_seconds[k] =
          prefix[end] - prefix[begin] + (begin > 0 ? input.cut_seconds[begin] : 0);
    }
    end = begin;
  }
  partition.bottleneck_seconds =
      *std::max_element(partition.stage_seconds.begin(), partition.stage_seconds.end());
  return partition;
}

}  // namespace placement
}  // namespace softwire
