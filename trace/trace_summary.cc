#include "trace/trace_summary.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

#include "base/format_bytes.h"
#include "trace/critical_path.h"

namespace softwire {
namespace trace {
namespace {

constexpr double kNanos = 1e-9;

struct Range {
  TimeNs start;
  TimeNs end;
};

// Total length of the union of `ranges` clipped to [from, to).
TimeNs CoveredTime(std::vector<Range> ranges, TimeNs from, TimeNs to) {
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.start < b.start; });
  TimeNs covered = 0;
  TimeNs reached = from;
  for (const Range& range : ranges) {
    const TimeNs start = std::max(range.start, reached);
    const TimeNs end = std::min(range.end, to);
    if (end > start) {
      covered += end - start;
      reached = end;
    }
  }
  return covered;
}

std::string Percent(double share) {
  char text[16];
  std::snprintf(text, sizeof(text), "%5.1f%%", 100.0 * share);
  return text;
}

std::string Pad(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

class Summarizer {
 public:
  explicit Summarizer(const TraceModel& model) : model_(model), plan_(model.plan) {}

  TraceSummary Run() {
    summary_.firings = static_cast<int64_t>(model_.firings.size());
    summary_.span_seconds = (model_.span_end() - model_.span_begin()) * kNanos;
    Steps();
    Devices();
    Actors();
    CriticalPathOfTheSteadySteps();
    Bubble();
    Memory();
    return std::move(summary_);
  }

 private:
  // The pipeline is the compute actors when the plan has some (sources, variables and
  // optimizer updates run ahead or behind the stages and are not stages), else every actor.
  // Step spans end with the pipeline's last firing and begin with the first of those that
  // StepStartingActors names.
  bool IsSteady(int64_t step) const {
    return step >= summary_.first_steady_step && step < summary_.end_steady_step;
  }

  bool InPipeline(const FiringRecord& firing) const {
    return !has_compute_ || plan_.actors[static_cast<size_t>(firing.actor)].kind == "compute";
  }

  bool StartsStep(const FiringRecord& firing) const {
    return starts_step_[static_cast<size_t>(firing.actor)];
  }

  void Steps() {
    for (const ActorFacts& actor : plan_.actors) has_compute_ |= actor.kind == "compute";
    starts_step_ = StepStartingActors(plan_);
    if (model_.firings.empty()) return;
    int64_t first = std::numeric_limits<int64_t>::max();
    int64_t last = std::numeric_limits<int64_t>::min();
    for (const FiringRecord& firing : model_.firings) {
      const int64_t step = model_.StepOf(firing);
      first = std::min(first, step);
      last = std::max(last, step);
    }
    summary_.first_step = first;
    summary_.end_step = last + 1;
    summary_.first_steady_step = summary_.end_step - first >= 2 ? first + 1 : first;
    summary_.end_steady_step = summary_.end_step;
    steady_from_ = std::numeric_limits<TimeNs>::max();
    steady_to_ = std::numeric_limits<TimeNs>::min();
    windowed_ = !model_.info.window.all() && summary_.end_step - first >= 3;
    if (windowed_) {
      // A window of a longer run: steps overlap (variables, loss seeds and sources run a step
      // or two ahead), and the steps before and after the window ran beside its first and last
      // steps unrecorded. The steady time is then from the end of the first recorded step
      // (every earlier step had ended) to the end of the last but one (the next step's work
      // waits for the last one's updates): steps [first + 1, end - 1).
      summary_.end_steady_step = summary_.end_step - 1;
      TimeNs first_end = std::numeric_limits<TimeNs>::min();
      for (const FiringRecord& firing : model_.firings) {
        const int64_t step = model_.StepOf(firing);
        if (step == first) first_end = std::max(first_end, firing.end);
        if (step == summary_.end_steady_step - 1) steady_to_ = std::max(steady_to_, firing.end);
      }
      steady_from_ = first_end;
    } else {
      for (const FiringRecord& firing : model_.firings) {
        if (!IsSteady(model_.StepOf(firing)) || !InPipeline(firing)) continue;
        if (StartsStep(firing)) steady_from_ = std::min(steady_from_, firing.start);
        steady_to_ = std::max(steady_to_, firing.end);
      }
    }
    summary_.steady_seconds = std::max<TimeNs>(0, steady_to_ - steady_from_) * kNanos;
    if (steady_to_ > steady_from_) {
      summary_.steady_begin = steady_from_;
      summary_.steady_end = steady_to_;
    }
  }

  void Devices() {
    std::vector<std::vector<Range>> busy(plan_.devices.size());
    for (const FiringRecord& firing : model_.firings) {
      const size_t device =
          static_cast<size_t>(plan_.actors[static_cast<size_t>(firing.actor)].device);
      busy[device].push_back(Range{firing.start, firing.end});
    }
    const TimeNs begin = model_.span_begin();
    const TimeNs end = model_.span_end();
    for (size_t d = 0; d < plan_.devices.size(); ++d) {
      DeviceUsage usage;
      usage.device = static_cast<int32_t>(d);
      const TimeNs covered = CoveredTime(busy[d], begin, end);
      usage.busy_seconds = covered * kNanos;
      usage.utilization = end > begin ? static_cast<double>(covered) / (end - begin) : 0;
      if (steady_to_ > steady_from_) {
        usage.steady_utilization =
            static_cast<double>(CoveredTime(busy[d], steady_from_, steady_to_)) /
            (steady_to_ - steady_from_);
      }
      summary_.devices.push_back(usage);
    }
  }

  void Actors() {
    const double span = std::max<TimeNs>(1, model_.span_end() - model_.span_begin());
    std::vector<ActorUsage> actors(plan_.actors.size());
    for (size_t a = 0; a < actors.size(); ++a) actors[a].actor = static_cast<int32_t>(a);
    for (const FiringRecord& firing : model_.firings) {
      ActorUsage& usage = actors[static_cast<size_t>(firing.actor)];
      ++usage.firings;
      usage.busy_seconds += (firing.end - firing.start) * kNanos;
      usage.busy += (firing.end - firing.start) / span;
    }
    for (const WaitRecord& wait : model_.waits) {
      ActorUsage& usage = actors[static_cast<size_t>(wait.actor)];
      const double share = (wait.end - wait.start) / span;
      switch (wait.kind) {
        case WaitKind::kStarved:
          usage.starved += share;
          break;
        case WaitKind::kBlocked:
          usage.blocked += share;
          break;
        case WaitKind::kQueued:
          usage.queued += share;
          break;
      }
    }
    summary_.actors = std::move(actors);
  }

  // The steady steps' critical path (critical_path.h), in the summary's terms.
  void CriticalPathOfTheSteadySteps() {
    if (model_.firings.empty() || steady_to_ <= steady_from_) return;
    const CriticalPath path = FindCriticalPath(model_, steady_from_, steady_to_);
    if (path.firings.empty()) return;
    for (const PathFiring& on_path : path.firings) {
      const FiringRecord& firing = model_.firings[on_path.firing];
      summary_.critical_path.push_back(on_path.firing);
      if (summary_.path_segments.empty() || summary_.path_segments.back().actor != firing.actor) {
        summary_.path_segments.push_back(PathSegment{firing.actor, firing.firing, 0, 0});
      }
      ++summary_.path_segments.back().firings;
      summary_.path_segments.back().busy_seconds +=
          (firing.end - std::max(firing.start, path.begin)) * kNanos;
    }
    for (const PathActorShare& share : path.actors) {
      summary_.path_actors.push_back(
          PathActor{share.actor, share.firings, share.busy_ns * kNanos, share.share});
    }
    summary_.path_busy_seconds = path.busy_ns * kNanos;
    summary_.path_wait_seconds = path.wait_ns * kNanos;
    summary_.path_seconds = path.length_ns() * kNanos;
    summary_.bottleneck = summary_.path_actors.front().actor;
    summary_.bottleneck_seconds = summary_.path_actors.front().busy_seconds;
  }

  void Bubble() {
    summary_.stages = plan_.stages();
    summary_.pieces_per_step = plan_.pieces_per_step;
    const double p = summary_.stages;
    const double m = static_cast<double>(plan_.pieces_per_step);
    summary_.bubble_formula = (p - 1) / (m + p - 1);
    if (model_.firings.empty()) return;
    std::vector<std::vector<Range>> busy(plan_.devices.size());
    struct StepSpan {
      TimeNs start = std::numeric_limits<TimeNs>::max();
      TimeNs end = std::numeric_limits<TimeNs>::min();
      std::set<int32_t> devices;
    };
    std::map<int64_t, StepSpan> steps;
    StepSpan warmup;
    for (const FiringRecord& firing : model_.firings) {
      if (!InPipeline(firing)) continue;
      const int32_t device = plan_.actors[static_cast<size_t>(firing.actor)].device;
      busy[static_cast<size_t>(device)].push_back(Range{firing.start, firing.end});
      const int64_t step = model_.StepOf(firing);
      if (step == summary_.first_step && !IsSteady(step) && !windowed_) {
        if (StartsStep(firing)) warmup.start = std::min(warmup.start, firing.start);
        warmup.end = std::max(warmup.end, firing.end);
        warmup.devices.insert(device);
      }
      if (!IsSteady(step)) continue;
      StepSpan& span = steps[step];
      // In a window the steps' spans are clipped to the steady time (see Steps()).
      if (StartsStep(firing)) {
        span.start =
            std::min(span.start, windowed_ ? std::max(firing.start, steady_from_) : firing.start);
      }
      span.end = std::max(span.end, windowed_ ? std::min(firing.end, steady_to_) : firing.end);
      span.devices.insert(device);
    }
    // Per step: each device's idle time within the span, and the busiest device's.
    IdleShares steady;
    for (const auto& [step, span] : steps) {
      steady.Add(span.start, span.end, span.devices, busy);
    }
    steady.Finish(&summary_.bubble_measured, &summary_.bubble_fill_drain,
                  &summary_.bubble_imbalance);
    if (warmup.start < warmup.end && summary_.first_steady_step > summary_.first_step) {
      IdleShares first;
      first.Add(warmup.start, warmup.end, warmup.devices, busy);
      first.Finish(&summary_.warmup_idle, &summary_.warmup_fill_drain, &summary_.warmup_imbalance);
    }
  }

  // Idle time of the devices within step spans, split into the busiest device's idle time (the
  // pipeline filling and draining) and what the others idle beyond it (imbalance).
  struct IdleShares {
    double idle = 0;
    double busiest_idle = 0;
    double total = 0;
    void Add(TimeNs start, TimeNs end, const std::set<int32_t>& devices,
             const std::vector<std::vector<Range>>& busy) {
      if (end <= start || devices.empty()) return;
      const TimeNs length = end - start;
      TimeNs most_busy = 0;
      for (int32_t device : devices) {
        const TimeNs covered = CoveredTime(busy[static_cast<size_t>(device)], start, end);
        most_busy = std::max(most_busy, covered);
        idle += static_cast<double>(length - covered);
        total += static_cast<double>(length);
      }
      busiest_idle += static_cast<double>(length - most_busy) * static_cast<double>(devices.size());
    }
    void Finish(double* measured, double* fill_drain, double* imbalance) const {
      if (total <= 0) return;
      *measured = idle / total;
      *fill_drain = busiest_idle / total;
      *imbalance = (idle - busiest_idle) / total;
    }
  };

  void Memory() {
    std::vector<int64_t> current(plan_.devices.size(), 0);
    std::vector<int64_t> high(plan_.devices.size(), 0);
    std::vector<int32_t> occupied(plan_.registers.size(), 0);
    for (const CounterRecord& counter : model_.counters) {
      const RegisterFacts& reg = plan_.registers[static_cast<size_t>(counter.register_id)];
      const size_t device = static_cast<size_t>(reg.device);
      current[device] += (counter.occupied - occupied[static_cast<size_t>(counter.register_id)]) *
                         reg.bytes_per_slot;
      occupied[static_cast<size_t>(counter.register_id)] = counter.occupied;
      high[device] = std::max(high[device], current[device]);
    }
    for (size_t d = 0; d < plan_.devices.size(); ++d) {
      MemoryUsage usage;
      usage.device = static_cast<int32_t>(d);
      usage.register_high_water = high[d];
      for (const ActorFacts& actor : plan_.actors) {
        if (actor.device == static_cast<int32_t>(d)) {
          usage.fixed_bytes += actor.workspace_bytes + actor.state_bytes;
        }
      }
      usage.high_water = usage.register_high_water + usage.fixed_bytes;
      usage.planned_bytes = plan_.devices[d].planned_bytes;
      summary_.memory.push_back(usage);
    }
  }

  const TraceModel& model_;
  const PlanFacts& plan_;
  TraceSummary summary_;
  TimeNs steady_from_ = 0;
  TimeNs steady_to_ = 0;
  bool windowed_ = false;  // A step window of a longer run with three or more steps recorded.
  bool has_compute_ = false;
  std::vector<bool> starts_step_;  // StepStartingActors.
};

std::string StepRange(int64_t first, int64_t end) {
  if (end - first <= 1) return "step " + std::to_string(first);
  return "steps " + std::to_string(first) + ".." + std::to_string(end - 1);
}

}  // namespace

TraceSummary Summarize(const TraceModel& model) {
  return Summarizer(model).Run();
}

std::vector<bool> StepStartingActors(const PlanFacts& plan) {
  std::vector<bool> reads_variable(plan.actors.size(), false);
  std::vector<bool> compute(plan.actors.size(), false);
  bool any_reads_variable = false;
  bool any_compute = false;
  for (size_t a = 0; a < plan.actors.size(); ++a) {
    const ActorFacts& actor = plan.actors[a];
    compute[a] = actor.kind == "compute";
    any_compute |= compute[a];
    if (!compute[a]) continue;
    for (int32_t input : actor.inputs) {
      if (input < 0 || input >= static_cast<int32_t>(plan.registers.size())) continue;
      const int32_t producer = plan.registers[static_cast<size_t>(input)].producer;
      if (producer >= 0 && producer < static_cast<int32_t>(plan.actors.size()) &&
          plan.actors[static_cast<size_t>(producer)].kind == "variable") {
        reads_variable[a] = true;
      }
    }
    any_reads_variable |= reads_variable[a];
  }
  if (any_reads_variable) return reads_variable;
  if (any_compute) return compute;
  return std::vector<bool>(plan.actors.size(), true);
}

std::string FormatSeconds(double seconds) {
  char text[32];
  if (seconds >= 1) {
    std::snprintf(text, sizeof(text), "%.2f s", seconds);
  } else if (seconds >= 1e-3) {
    std::snprintf(text, sizeof(text), "%.2f ms", seconds * 1e3);
  } else {
    std::snprintf(text, sizeof(text), "%.1f us", seconds * 1e6);
  }
  return text;
}

std::string FormatSummary(const TraceModel& model, const TraceSummary& summary) {
  const PlanFacts& plan = model.plan;
  const RecordingInfo& info = model.info;
  std::string out;
  char line[512];
  std::snprintf(line, sizeof(line),
                "trace of job '%s' (%s): %lld steps x %lld pieces; recorded %s, span %s, "
                "%lld firings\n",
                plan.job_name.c_str(), info.engine.c_str(), static_cast<long long>(plan.steps),
                static_cast<long long>(plan.pieces_per_step),
                info.window.all() ? "every step" : ("steps " + info.window.ToString()).c_str(),
                FormatSeconds(summary.span_seconds).c_str(),
                static_cast<long long>(summary.firings));
  out += line;
  if (info.events_dropped > 0) {
    std::snprintf(line, sizeof(line),
                  "warning: %lld events were dropped at the cap of %lld; the trace ends early\n",
                  static_cast<long long>(info.events_dropped),
                  static_cast<long long>(info.event_cap));
    out += line;
  }
  if (!info.outcome.empty() && info.outcome != "ok") out += "run: " + info.outcome + "\n";

  size_t width = 8;
  for (const DeviceFacts& device : plan.devices) width = std::max(width, device.name.size());
  for (const ActorFacts& actor : plan.actors) width = std::max(width, actor.name.size());
  width = std::min<size_t>(width, 40);

  out += "\ndevices: utilization over the span, and over the steady " +
         StepRange(summary.first_steady_step, summary.end_steady_step) + "\n";
  for (const DeviceUsage& usage : summary.devices) {
    out += "  " + Pad(plan.devices[static_cast<size_t>(usage.device)].name, width) + " " +
           Percent(usage.utilization) + "  " + Percent(usage.steady_utilization) + "   busy " +
           FormatSeconds(usage.busy_seconds) + "\n";
  }

  out += "\nactors: share of the span busy / starved / blocked / queued\n";
  for (const ActorUsage& usage : summary.actors) {
    const ActorFacts& actor = plan.actors[static_cast<size_t>(usage.actor)];
    out += "  " + Pad(actor.name, width) + " " + Percent(usage.busy) + " " +
           Percent(usage.starved) + " " + Percent(usage.blocked) + " " + Percent(usage.queued) +
           "   " + actor.kind + ", " + std::to_string(usage.firings) + " firings on " +
           plan.devices[static_cast<size_t>(actor.device)].name + "\n";
  }

  if (!summary.critical_path.empty()) {
    const double steady = summary.steady_seconds > 0 ? summary.steady_seconds : 1;
    std::snprintf(line, sizeof(line),
                  "\ncritical path: the steady %s's, %zu firings over %s (%.0f%% of the steady "
                  "time); share of the path:\n",
                  StepRange(summary.first_steady_step, summary.end_steady_step).c_str(),
                  summary.critical_path.size(), FormatSeconds(summary.path_seconds).c_str(),
                  100 * summary.path_seconds / steady);
    out += line;
    // Time per actor on the path, most first; then the waits between its firings.
    for (const PathActor& on_path : summary.path_actors) {
      std::snprintf(line, sizeof(line), "  %s %s  %6lld firings  %s\n",
                    Pad(plan.actors[static_cast<size_t>(on_path.actor)].name, width).c_str(),
                    Percent(on_path.share).c_str(), static_cast<long long>(on_path.firings),
                    FormatSeconds(on_path.busy_seconds).c_str());
      out += line;
    }
    std::snprintf(
        line, sizeof(line), "  %s %s  between firings (messages, scheduling)  %s\n",
        Pad("(waits)", width).c_str(),
        Percent(summary.path_seconds > 0 ? summary.path_wait_seconds / summary.path_seconds : 0)
            .c_str(),
        FormatSeconds(summary.path_wait_seconds).c_str());
    out += line;
  }
  if (summary.bottleneck >= 0) {
    const ActorFacts& actor = plan.actors[static_cast<size_t>(summary.bottleneck)];
    std::snprintf(line, sizeof(line),
                  "bottleneck: actor '%s' (%s on %s), %s of kernel time on the critical path\n",
                  actor.name.c_str(), actor.kind.c_str(),
                  plan.devices[static_cast<size_t>(actor.device)].name.c_str(),
                  FormatSeconds(summary.bottleneck_seconds).c_str());
    out += line;
  }

  out += "\npipeline bubble: ";
  if (summary.bubble_measured < 0) {
    out += "not measured (no firings)";
  } else if (summary.stages == 1) {
    // One stage: no pipeline, so no bubble by the formula; what is measured is plain idle time.
    std::snprintf(line, sizeof(line), "none (1 stage); the devices idled %.1f%% of each step",
                  100 * summary.bubble_measured);
    out += line;
  } else {
    std::snprintf(
        line, sizeof(line),
        "the devices idled %.1f%% of the steady %s: %.1f%% the pipeline filling and draining "
        "(the busiest device idle)",
        100 * summary.bubble_measured,
        StepRange(summary.first_steady_step, summary.end_steady_step).c_str(),
        100 * summary.bubble_fill_drain);
    out += line;
    std::snprintf(line, sizeof(line),
                  "\n  beside (p-1)/(m+p-1) = %.1f%% with p = %d stages, m = %lld pieces (equal "
                  "stages); %.1f%% imbalance (devices with less work than the busiest)",
                  100 * summary.bubble_formula, summary.stages,
                  static_cast<long long>(summary.pieces_per_step), 100 * summary.bubble_imbalance);
    out += line;
    if (summary.warmup_idle >= 0) {
      std::snprintf(line, sizeof(line),
                    "\n  warm-up step %lld apart: idle %.1f%% = %.1f%% filling and draining + "
                    "%.1f%% imbalance",
                    static_cast<long long>(summary.first_step), 100 * summary.warmup_idle,
                    100 * summary.warmup_fill_drain, 100 * summary.warmup_imbalance);
      out += line;
    }
  }
  if (summary.stages == 1 || summary.bubble_measured < 0) {
    std::snprintf(line, sizeof(line),
                  "; (p-1)/(m+p-1) = %.1f%% with p = %d stages, m = %lld pieces",
                  100 * summary.bubble_formula, summary.stages,
                  static_cast<long long>(summary.pieces_per_step));
    out += line;
  }
  out += "\n";

  out += "\nmemory high-water per device (registers in use + workspaces and state) / planned\n";
  for (const MemoryUsage& usage : summary.memory) {
    out += "  " + Pad(plan.devices[static_cast<size_t>(usage.device)].name, width) + " " +
           FormatBytes(usage.high_water) + " (" + FormatBytes(usage.register_high_water) + " + " +
           FormatBytes(usage.fixed_bytes) + ") of " + FormatBytes(usage.planned_bytes) + "\n";
  }
  return out;
}

}  // namespace trace
}  // namespace softwire
