// CompileWithinBudget and DescribeBudget (memory_budget.h).
#include "compiler/memory_budget.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <utility>
#include <vector>

#include "base/format_bytes.h"
#include "compiler/pass_manager.h"
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

struct Attempt {
  std::unique_ptr<Compilation> compilation;
  Status status;

  // Compiled whole but over a device's budget (meet_budget's error).
  bool OverBudget() const {
    return status.code() == StatusCode::kResourceExhausted && compilation->plan.has_value() &&
           compilation->budget.planned.size() == compilation->devices.size();
  }
};

class BudgetSearch {
 public:
  BudgetSearch(const JobFile& job_file, const CompileOptions& options, const OpRegistry& registry)
      : job_file_(job_file), options_(options), registry_(registry) {}

  StatusOr<std::unique_ptr<Compilation>> Run() {
    Attempt base = Try(BudgetChoices());
    if (base.status.ok() || !base.OverBudget()) return Finish(std::move(base));
    without_ = base.compilation->budget.planned;
    candidates_ = base.compilation->budget.recompute_candidates;
    last_ = std::move(base);
    // 2: recompute, the most bytes per second first.
    std::optional<Attempt> fits = SearchRecompute(false);
    if (!status_.ok()) return status_;
    if (fits.has_value()) return Finish(std::move(*fits));
    // 3: sharding over dp, alone, then with recompute.
    if (last_.compilation->parallel.data > 1) {
      Attempt sharded = Try({0, true});
      if (!sharded.status.ok() && !sharded.OverBudget()) return sharded.status;
      with_sharding_ = sharded.compilation->budget.planned;
      if (sharded.status.ok()) return Finish(std::move(sharded));
      last_ = std::move(sharded);
      fits = SearchRecompute(true);
      if (!status_.ok()) return status_;
      if (fits.has_value()) return Finish(std::move(*fits));
    }
    return Exhausted();
  }

 private:
  Attempt Try(const BudgetChoices& choices) {
    Attempt attempt;
    attempt.compilation = std::make_unique<Compilation>(job_file_, options_, registry_);
    attempt.compilation->budget.choices = choices;
    attempt.status = PassManager(StandardPasses()).Run(*attempt.compilation);
    ++attempts_;
    if (attempt.OverBudget()) {
      const Compilation& compilation = *attempt.compilation;
      int worst = 0;
      int64_t excess = std::numeric_limits<int64_t>::min();
      for (const TargetDevice& device : compilation.devices) {
        const int64_t budget = device.spec.memory_bytes();
        if (budget == 0) continue;
        const int64_t over = compilation.budget.planned[device.id] - budget;
        if (over > excess) {
          excess = over;
          worst = device.id;
        }
      }
      if (!has_best_ || excess < best_excess_) {
        best_excess_ = excess;
        best_message_ = OverBudgetMessage(compilation, worst, compilation.budget.planned[worst]);
        has_best_ = true;
        best_report_ = compilation.budget;
        best_data_ = compilation.parallel.data;
      }
    }
    return attempt;
  }

  // The fewest recompute candidates (a prefix of their ranking) that fit: doubling, then
  // bisection between the last prefix over budget and the first that fits. Leaves the last
  // attempt over budget in last_; an attempt failing otherwise sets status_.
  std::optional<Attempt> SearchRecompute(bool shard) {
    if (candidates_ == 0) return std::nullopt;
    int over = 0;
    std::optional<Attempt> fits;
    int fits_at = 0;
    for (int k = 1;; k = std::min(2 * k, candidates_)) {
      Attempt attempt = Try({k, shard});
      if (!attempt.status.ok() && !attempt.OverBudget()) {
        status_ = attempt.status;
        return std::nullopt;
      }
      if (attempt.status.ok()) {
        fits = std::move(attempt);
        fits_at = k;
        break;
      }
      last_ = std::move(attempt);
      over = k;
      if (k == candidates_) return std::nullopt;
    }
    while (fits_at - over > 1) {
      const int k = over + (fits_at - over) / 2;
      Attempt attempt = Try({k, shard});
      if (!attempt.status.ok() && !attempt.OverBudget()) {
        status_ = attempt.status;
        return std::nullopt;
      }
      if (attempt.status.ok()) {
        fits = std::move(attempt);
        fits_at = k;
      } else {
        over = k;
      }
    }
    return fits;
  }

  StatusOr<std::unique_ptr<Compilation>> Finish(Attempt attempt) {
    if (!attempt.status.ok()) return attempt.status;
    BudgetReport& report = attempt.compilation->budget;
    report.planned_without_measures = without_.empty() ? report.planned : without_;
    report.planned_with_sharding_alone = with_sharding_;
    report.attempts = attempts_;
    return std::move(attempt.compilation);
  }

  // The attempt whose worst device was least over its budget: that device, its bytes there.
  Status Exhausted() const {
    const BudgetReport& report = best_report_;
    std::string tried = "fewer slots (" + std::to_string(report.slots_lowered) + " lowered)";
    tried += ", recompute (" + std::to_string(report.recomputed.size()) + " of " +
             std::to_string(candidates_) + " activations)";
    if (best_data_ > 1) {
      tried += ", sharding over dp " + std::to_string(best_data_) + " (" +
               std::to_string(report.sharded.size()) + " variables)";
    }
    return ResourceExhaustedError(best_message_ + "; the fewest bytes came with " + tried +
                                  ", of " + std::to_string(attempts_) + " compilation" +
                                  (attempts_ == 1 ? "" : "s"));
  }

  const JobFile& job_file_;
  const CompileOptions& options_;
  const OpRegistry& registry_;
  int attempts_ = 0;
  int candidates_ = 0;
  Attempt last_;
  Status status_;
  // The attempt least over budget (its worst device's excess), described while it lived.
  bool has_best_ = false;
  int64_t best_excess_ = 0;
  std::string best_message_;
  BudgetReport best_report_;
  int best_data_ = 1;
  std::vector<int64_t> without_;
  std::vector<int64_t> with_sharding_;
};

std::string Signed(int64_t bytes) {
  return bytes < 0 ? "-" + FormatBytes(-bytes) : FormatBytes(bytes);
}

// "1.0 MiB on node0/cpu:0, 1.0 MiB on node0/cpu:1" for before - after, devices with a change.
std::string SavedPerDevice(const Compilation& compilation, const std::vector<int64_t>& before,
                           const std::vector<int64_t>& after) {
  std::string text;
  for (const TargetDevice& device : compilation.devices) {
    const size_t d = static_cast<size_t>(device.id);
    if (d >= before.size() || d >= after.size() || before[d] == after[d]) continue;
    text += (text.empty() ? "" : ", ") + Signed(before[d] - after[d]) + " on " + device.FullName();
  }
  return text.empty() ? "nothing" : text;
}

}  // namespace

StatusOr<std::unique_ptr<Compilation>> CompileWithinBudget(const JobFile& job_file,
                                                           const CompileOptions& options,
                                                           const OpRegistry& registry) {
  return BudgetSearch(job_file, options, registry).Run();
}

std::string DescribeBudget(const Compilation& compilation) {
  const BudgetReport& report = compilation.budget;
  bool budgeted = false;
  for (const TargetDevice& device : compilation.devices) budgeted |= device.spec.memory_bytes() > 0;
  if (!budgeted || report.planned.size() != compilation.devices.size()) return "";
  std::string text = "memory budget (" + std::to_string(report.attempts) + " compilation" +
                     (report.attempts == 1 ? "" : "s") + "):\n";
  for (const TargetDevice& device : compilation.devices) {
    const int64_t budget = device.spec.memory_bytes();
    text += "  " + device.FullName() + ": planned " + FormatBytes(report.planned[device.id]) +
            " of " + (budget > 0 ? FormatBytes(budget) : std::string("unlimited")) + "\n";
  }
  int64_t slot_bytes = 0;
  for (int64_t bytes : report.slot_bytes_saved) slot_bytes += bytes;
  if (report.slots_lowered == 0) {
    text += "  fewer slots: none needed\n";
  } else {
    std::string per_device;
    for (const TargetDevice& device : compilation.devices) {
      const int64_t saved = report.slot_bytes_saved[device.id];
      if (saved == 0) continue;
      per_device +=
          (per_device.empty() ? "" : ", ") + FormatBytes(saved) + " on " + device.FullName();
    }
    text += "  fewer slots: " + std::to_string(report.slots_lowered) +
            " registers lowered to one slot, saving " + per_device + " (before reuse)\n";
  }
  const bool sharded = !report.sharded.empty();
  const std::vector<int64_t>& before_recompute =
      sharded ? report.planned_with_sharding_alone : report.planned_without_measures;
  if (report.recomputed.empty()) {
    text += "  recompute: not chosen (" + std::to_string(report.recompute_candidates) +
            " candidate activations)\n";
  } else {
    double seconds = 0;
    std::string values;
    for (const RecomputedValue& value : report.recomputed) {
      seconds += value.seconds;
      values += (values.empty() ? "" : ", ") + value.name + " " + FormatBytes(value.bytes);
    }
    char extra[32];
    std::snprintf(extra, sizeof(extra), "%.3g", seconds * 1e6);
    text += "  recompute: " + std::to_string(report.recomputed.size()) + " of " +
            std::to_string(report.recompute_candidates) +
            " candidate activations recomputed in the backward pass (+" + extra +
            " us per piece by the cost model: " + values + "), saving " +
            SavedPerDevice(compilation, before_recompute, report.planned) + "\n";
  }
  if (!sharded) {
    text += "  sharding: not chosen\n";
  } else {
    std::string names;
    for (const std::string& name : report.sharded) names += (names.empty() ? "" : ", ") + name;
    const std::vector<int64_t>& after =
        report.recomputed.empty() ? report.planned : report.planned_with_sharding_alone;
    text += "  sharding: the updates, optimizer state and gradients of " +
            std::to_string(report.sharded.size()) + " variables split over dp " +
            std::to_string(compilation.parallel.data) + " (" + names + "), saving " +
            SavedPerDevice(compilation, report.planned_without_measures, after) + "\n";
  }
  return text;
}

}  // namespace compiler
}  // namespace softwire
