#include "trace/critical_path.h"

#include <algorithm>
#include <map>
#include <utility>

#include "plan/fill_arithmetic.h"

namespace softwire {
namespace trace {
namespace {

struct Predecessor {
  int64_t firing = -1;  // Index into model.firings; -1: none recorded.
  PathLink link = PathLink::kFirst;
};

class PathFinder {
 public:
  explicit PathFinder(const TraceModel& model) : model_(model), plan_(model.plan) {
    by_actor_.assign(plan_.actors.size(), {});
    device_firings_.assign(plan_.devices.size(), {});
    for (size_t i = 0; i < model_.firings.size(); ++i) {
      const FiringRecord& firing = model_.firings[i];
      by_actor_[static_cast<size_t>(firing.actor)].emplace_back(firing.firing, i);
      device_firings_[static_cast<size_t>(ActorOf(firing).device)].push_back(i);
    }
    for (auto& list : by_actor_) std::sort(list.begin(), list.end());
    for (std::vector<size_t>& list : device_firings_) {
      std::sort(list.begin(), list.end(), [this](size_t a, size_t b) {
        return model_.firings[a].end < model_.firings[b].end;
      });
    }
  }

  CriticalPath Find(TimeNs from, TimeNs to) const {
    CriticalPath path;
    int64_t last = -1;
    for (size_t i = 0; i < model_.firings.size(); ++i) {
      const FiringRecord& firing = model_.firings[i];
      if (firing.end <= from || firing.end > to) continue;
      if (last < 0 || firing.end > model_.firings[static_cast<size_t>(last)].end) {
        last = static_cast<int64_t>(i);
      }
    }
    if (last < 0) return path;
    std::vector<bool> visited(model_.firings.size(), false);
    Predecessor current{last, PathLink::kFirst};
    std::vector<PathFiring> backwards;
    while (current.firing >= 0 && !visited[static_cast<size_t>(current.firing)]) {
      const size_t index = static_cast<size_t>(current.firing);
      visited[index] = true;
      Predecessor before = PredecessorOf(index);
      if (before.firing >= 0 && model_.firings[static_cast<size_t>(before.firing)].end <= from) {
        before = Predecessor{};
      }
      backwards.push_back(PathFiring{index, before.link, 0});
      current = before;
    }
    path.firings.assign(backwards.rbegin(), backwards.rend());
    Measure(from, &path);
    return path;
  }

 private:
  const ActorFacts& ActorOf(const FiringRecord& firing) const {
    return plan_.actors[static_cast<size_t>(firing.actor)];
  }

  // model_.firings index of (actor, firing), or -1.
  int64_t IndexOf(int32_t actor, int64_t firing) const {
    if (actor < 0 || actor >= static_cast<int32_t>(by_actor_.size())) return -1;
    const auto& list = by_actor_[static_cast<size_t>(actor)];
    auto found = std::lower_bound(list.begin(), list.end(), std::make_pair(firing, size_t{0}));
    if (found == list.end() || found->first != firing) return -1;
    return static_cast<int64_t>(found->second);
  }

  // The firing of the same device that ended last before `index` started, if it ended after
  // `index` could have launched: the queue was busy with it. -1 otherwise.
  int64_t QueueHolder(size_t index) const {
    const FiringRecord& firing = model_.firings[index];
    if (firing.start <= firing.launch) return -1;
    const std::vector<size_t>& list = device_firings_[static_cast<size_t>(ActorOf(firing).device)];
    auto after = std::upper_bound(
        list.begin(), list.end(), firing.start,
        [this](TimeNs time, size_t other) { return time < model_.firings[other].end; });
    while (after != list.begin()) {
      --after;
      if (*after == index) continue;
      if (model_.firings[*after].end > firing.launch) return static_cast<int64_t>(*after);
      break;
    }
    return -1;
  }

  // The firings the recorded cause names, with how they link (see the header), then the
  // actor's own previous firing: on a tie the recorded cause wins.
  std::vector<Predecessor> Candidates(const FiringRecord& firing) const {
    std::vector<Predecessor> candidates = CauseCandidates(firing);
    candidates.push_back({IndexOf(firing.actor, firing.firing - 1), PathLink::kPrevious});
    return candidates;
  }

  std::vector<Predecessor> CauseCandidates(const FiringRecord& firing) const {
    std::vector<Predecessor> candidates;
    const Cause& cause = firing.cause;
    if (cause.kind != CauseKind::kInput && cause.kind != CauseKind::kSlot) return candidates;
    if (cause.register_id < 0 ||
        cause.register_id >= static_cast<int32_t>(plan_.registers.size()) || cause.actor < 0 ||
        cause.actor >= static_cast<int32_t>(plan_.actors.size())) {
      return candidates;
    }
    const RegisterFacts& reg = plan_.registers[static_cast<size_t>(cause.register_id)];
    const int64_t sender_period = plan_.actors[static_cast<size_t>(cause.actor)].period;
    if (cause.kind == CauseKind::kSlot) {
      candidates.push_back(
          {IndexOf(cause.actor, plan::ReleasingFiring(cause.sequence, sender_period, reg.period)),
           PathLink::kSlot});
      return candidates;
    }
    candidates.push_back(
        {IndexOf(cause.actor, plan::CompletingFiring(cause.sequence, sender_period, reg.period)),
         PathLink::kInput});
    if (reg.phase1_consumer == firing.actor) {
      // An in-place writer's Ready leaves when the last reader released the fill.
      for (int32_t reader : reg.consumers) {
        const int64_t period = plan_.actors[static_cast<size_t>(reader)].period;
        candidates.push_back(
            {IndexOf(reader, plan::ReleasingFiring(cause.sequence, period, reg.period)),
             PathLink::kInput});
      }
    }
    return candidates;
  }

  Predecessor PredecessorOf(size_t index) const {
    const int64_t holder = QueueHolder(index);
    if (holder >= 0) return Predecessor{holder, PathLink::kQueue};
    const FiringRecord& firing = model_.firings[index];
    Predecessor best;
    for (const Predecessor& candidate : Candidates(firing)) {
      if (candidate.firing < 0 || static_cast<size_t>(candidate.firing) == index) continue;
      const FiringRecord& other = model_.firings[static_cast<size_t>(candidate.firing)];
      if (other.end > firing.start) continue;
      if (best.firing < 0 || other.end > model_.firings[static_cast<size_t>(best.firing)].end) {
        best = candidate;
      }
    }
    return best;
  }

  void Measure(TimeNs from, CriticalPath* path) const {
    const FiringRecord& first = model_.firings[path->firings.front().firing];
    path->begin = std::max(from, first.start);
    path->end = model_.firings[path->firings.back().firing].end;
    std::map<int32_t, PathActorShare> by_actor;
    TimeNs reached = path->begin;
    for (PathFiring& on_path : path->firings) {
      const FiringRecord& firing = model_.firings[on_path.firing];
      const TimeNs start = std::max(firing.start, path->begin);
      on_path.wait_ns = std::max<TimeNs>(0, start - reached);
      const TimeNs busy = std::max<TimeNs>(0, firing.end - start);
      path->wait_ns += on_path.wait_ns;
      path->busy_ns += busy;
      reached = std::max(reached, firing.end);
      PathActorShare& share = by_actor[firing.actor];
      share.actor = firing.actor;
      ++share.firings;
      share.busy_ns += busy;
    }
    const double length = static_cast<double>(std::max<TimeNs>(1, path->length_ns()));
    for (auto& [actor, share] : by_actor) {
      share.share = static_cast<double>(share.busy_ns) / length;
      path->actors.push_back(share);
    }
    std::stable_sort(
        path->actors.begin(), path->actors.end(),
        [](const PathActorShare& a, const PathActorShare& b) { return a.busy_ns > b.busy_ns; });
  }

  const TraceModel& model_;
  const PlanFacts& plan_;
  std::vector<std::vector<std::pair<int64_t, size_t>>> by_actor_;  // (firing, index), sorted.
  std::vector<std::vector<size_t>> device_firings_;                // By end time.
};

}  // namespace

const char* PathLinkName(PathLink link) {
  switch (link) {
    case PathLink::kFirst:
      return "first";
    case PathLink::kInput:
      return "input";
    case PathLink::kSlot:
      return "slot";
    case PathLink::kQueue:
      return "queue";
    case PathLink::kPrevious:
      return "previous";
  }
  return "unknown";
}

CriticalPath FindCriticalPath(const TraceModel& model, TimeNs from, TimeNs to) {
  return PathFinder(model).Find(from, to);
}

}  // namespace trace
}  // namespace softwire
