// BuildTraceModel: the derivations of trace_model.h. Each reads the raw events once through
// indexes keyed by (register, actor, fill), so a trace of N events costs O(N log N).
#include "trace/trace_model.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "plan/fill_arithmetic.h"

namespace softwire {
namespace trace {

const char* WaitKindName(WaitKind kind) {
  switch (kind) {
    case WaitKind::kStarved:
      return "starved";
    case WaitKind::kBlocked:
      return "blocked";
    case WaitKind::kQueued:
      return "queued";
  }
  return "unknown";
}

const char* CauseKindName(CauseKind kind) {
  switch (kind) {
    case CauseKind::kNone:
      return "unknown";
    case CauseKind::kStart:
      return "start";
    case CauseKind::kInput:
      return "input";
    case CauseKind::kSlot:
      return "slot";
    case CauseKind::kPreviousFiring:
      return "previous firing";
  }
  return "unknown";
}

TimeNs TraceModel::span_begin() const {
  TimeNs begin = std::numeric_limits<TimeNs>::max();
  for (const FiringRecord& firing : firings) begin = std::min(begin, firing.launch);
  for (const WaitRecord& wait : waits) begin = std::min(begin, wait.start);
  return begin == std::numeric_limits<TimeNs>::max() ? 0 : begin;
}

TimeNs TraceModel::span_end() const {
  TimeNs end = std::numeric_limits<TimeNs>::min();
  for (const FiringRecord& firing : firings) end = std::max(end, firing.end);
  for (const WaitRecord& wait : waits) end = std::max(end, wait.end);
  return end == std::numeric_limits<TimeNs>::min() ? 0 : end;
}

int64_t TraceModel::FirstPieceOf(const FiringRecord& firing) const {
  return firing.firing * plan.actors[static_cast<size_t>(firing.actor)].period;
}

int64_t TraceModel::StepOf(const FiringRecord& firing) const {
  return FirstPieceOf(firing) / std::max<int64_t>(1, plan.pieces_per_step);
}

namespace {

constexpr TimeNs kUnknown = std::numeric_limits<TimeNs>::min();

// (register, actor, fill): a Ready to a consumer, a Release from one, or (actor -1) a free.
struct FillKey {
  int32_t register_id;
  int32_t actor;
  int64_t fill;
  bool operator==(const FillKey& other) const {
    return register_id == other.register_id && actor == other.actor && fill == other.fill;
  }
};

struct FillKeyHash {
  size_t operator()(const FillKey& key) const {
    uint64_t h = static_cast<uint64_t>(key.fill) * 0x9E3779B97F4A7C15ull;
    h ^= (static_cast<uint64_t>(static_cast<uint32_t>(key.register_id)) << 32) |
         static_cast<uint32_t>(key.actor);
    h *= 0xBF58476D1CE4E5B9ull;
    return static_cast<size_t>(h ^ (h >> 31));
  }
};

using FillTimes = std::unordered_map<FillKey, TimeNs, FillKeyHash>;

TimeNs Lookup(const FillTimes& times, int32_t register_id, int32_t actor, int64_t fill) {
  auto found = times.find(FillKey{register_id, actor, fill});
  return found == times.end() ? kUnknown : found->second;
}

class Analysis {
 public:
  Analysis(const TraceLog& log, TraceModel* model) : log_(log), plan_(log.plan), model_(model) {}

  void Run() {
    CollectEvents();
    DeriveWaits();
    DeriveCounters();
    DeriveFlows();
  }

 private:
  bool ValidActor(int32_t id) const {
    return id >= 0 && id < static_cast<int32_t>(plan_.actors.size());
  }
  bool ValidRegister(int32_t id) const {
    return id >= 0 && id < static_cast<int32_t>(plan_.registers.size());
  }
  TimeNs Local(TimeNs time) const { return time - log_.info.origin_ns; }

  void CollectEvents();
  void DeriveMessages();
  void DeriveWaits();
  void DeriveWaitsBefore(int32_t actor, size_t position);
  void DeriveCounters();
  void DeriveFlows();
  // The record of `actor`'s firing `firing`, or null when it was not recorded.
  const FiringRecord* FindFiring(int32_t actor, int64_t firing) const;
  void AddWait(WaitRecord wait);

  const TraceLog& log_;
  const PlanFacts& plan_;
  TraceModel* model_;
  // Per actor: (firing index, index into model_->firings), by firing index.
  std::vector<std::vector<std::pair<int64_t, size_t>>> by_actor_;
  FillTimes ready_;    // (register, consumer, fill) -> when the Ready left.
  FillTimes release_;  // (register, consumer, fill) -> when the Release left.
  FillTimes freed_;    // (register, -1, fill) -> when the fill's slot became free.
  struct Free {
    int32_t register_id;
    int64_t fill;
    TimeNs time;
  };
  std::vector<Free> frees_;
  // A fill handed to a consumer (or, consumer -1, completed) by a producer at `time`.
  struct Ready {
    int32_t register_id;
    int64_t fill;
    int32_t producer;
    int32_t consumer;
    TimeNs time;
  };
  std::vector<Ready> readies_;
  std::vector<Ready> completed_;
};

void Analysis::CollectEvents() {
  by_actor_.assign(plan_.actors.size(), {});
  for (const TraceEvent& event : log_.events) {
    if (event.type != EventType::kFiring || !ValidActor(event.actor)) continue;
    FiringRecord firing;
    firing.actor = event.actor;
    firing.firing = event.index;
    firing.start = Local(event.start);
    firing.end = std::max(firing.start, Local(event.end));
    firing.launch = std::min(firing.start, Local(event.launch));
    firing.cause.kind = event.cause;
    firing.cause.actor = event.peer;
    firing.cause.register_id = event.register_id;
    firing.cause.sequence = event.sequence;
    model_->firings.push_back(firing);
  }
  std::vector<FiringRecord>& firings = model_->firings;
  std::sort(firings.begin(), firings.end(), [](const FiringRecord& a, const FiringRecord& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.actor != b.actor) return a.actor < b.actor;
    return a.firing < b.firing;
  });
  for (size_t i = 0; i < firings.size(); ++i) {
    by_actor_[static_cast<size_t>(firings[i].actor)].emplace_back(firings[i].firing, i);
  }
  for (auto& list : by_actor_) std::sort(list.begin(), list.end());
  DeriveMessages();
}

// A firing sends its Releases, then its Readies, when it ends (docs/PROTOCOL.md, "Launch"):
//   - a consumer's last firing reading fill s releases it at its end;
//   - a producer's firing completing fill s offers it to every phase-0 consumer at its end;
//   - the phase-1 consumer gets it when the last phase-0 consumer released it;
//   - the fill's slot is free when every consumer (phase 1 included) released it.
// A time stays unknown when a firing it depends on was not recorded.
void Analysis::DeriveMessages() {
  for (size_t a = 0; a < plan_.actors.size(); ++a) {
    const int32_t actor = static_cast<int32_t>(a);
    const ActorFacts& facts = plan_.actors[a];
    for (const auto& [index, record] : by_actor_[a]) {
      const TimeNs end = model_->firings[record].end;
      std::vector<int32_t> seen;  // A register read twice is released once.
      for (int32_t id : facts.inputs) {
        if (std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
        seen.push_back(id);
        const RegisterFacts& reg = plan_.registers[static_cast<size_t>(id)];
        if (((index + 1) * facts.period) % reg.period != 0) continue;
        release_[FillKey{id, actor, plan::FillOf(index, facts.period, reg.period)}] = end;
      }
      for (int32_t id : facts.outputs) {
        const RegisterFacts& reg = plan_.registers[static_cast<size_t>(id)];
        if (((index + 1) * facts.period) % reg.period != 0) continue;
        const int64_t fill = plan::FillOf(index, facts.period, reg.period);
        for (int32_t consumer : reg.consumers) {
          ready_[FillKey{id, consumer, fill}] = end;
          readies_.push_back(Ready{id, fill, actor, consumer, end});
        }
        completed_.push_back(Ready{id, fill, actor, -1, end});
      }
    }
  }
  // Fills whose every consumer's release is known: freed then; the phase-1 consumer's Ready
  // leaves when the last phase-0 consumer released.
  for (const Ready& fill : completed_) {
    const RegisterFacts& reg = plan_.registers[static_cast<size_t>(fill.register_id)];
    TimeNs readers_done = fill.time;  // With no phase-0 reader: offered on completion.
    bool known = true;
    for (int32_t consumer : reg.consumers) {
      const TimeNs released = Lookup(release_, fill.register_id, consumer, fill.fill);
      if (released == kUnknown) known = false;
      readers_done = std::max(readers_done, released);
    }
    if (!known) continue;
    TimeNs freed = readers_done;
    if (reg.phase1_consumer >= 0) {
      ready_[FillKey{fill.register_id, reg.phase1_consumer, fill.fill}] = readers_done;
      readies_.push_back(
          Ready{fill.register_id, fill.fill, fill.producer, reg.phase1_consumer, readers_done});
      const TimeNs written = Lookup(release_, fill.register_id, reg.phase1_consumer, fill.fill);
      if (written == kUnknown) continue;
      freed = std::max(freed, written);
    }
    freed_[FillKey{fill.register_id, -1, fill.fill}] = freed;
    frees_.push_back(Free{fill.register_id, fill.fill, freed});
  }
}

const FiringRecord* Analysis::FindFiring(int32_t actor, int64_t firing) const {
  if (!ValidActor(actor)) return nullptr;
  const auto& list = by_actor_[static_cast<size_t>(actor)];
  auto found = std::lower_bound(list.begin(), list.end(), std::make_pair(firing, size_t{0}));
  if (found == list.end() || found->first != firing) return nullptr;
  return &model_->firings[found->second];
}

void Analysis::DeriveWaits() {
  for (int32_t actor = 0; actor < static_cast<int32_t>(by_actor_.size()); ++actor) {
    for (size_t position = 0; position < by_actor_[static_cast<size_t>(actor)].size(); ++position) {
      DeriveWaitsBefore(actor, position);
    }
  }
}

void Analysis::AddWait(WaitRecord wait) {
  std::vector<WaitRecord>& waits = model_->waits;
  if (!waits.empty()) {
    WaitRecord& last = waits.back();
    if (last.actor == wait.actor && last.firing == wait.firing && last.kind == wait.kind &&
        last.register_id == wait.register_id && last.sequence == wait.sequence &&
        last.waiting_on == wait.waiting_on && last.end == wait.start) {
      last.end = wait.end;
      return;
    }
  }
  waits.push_back(std::move(wait));
}

// What `actor` waited for between its previous firing (or the start) and the firing at
// `position` of its list: at each moment, the first input whose fill had not arrived
// (starved), else the first output whose slot had not come back (blocked), else nothing but
// its queue or thread (queued) -- the order ActorProtocol::DescribeWait reports them in.
void Analysis::DeriveWaitsBefore(int32_t actor, size_t position) {
  const auto& list = by_actor_[static_cast<size_t>(actor)];
  const int64_t index = list[position].first;
  const FiringRecord& firing = model_->firings[list[position].second];
  TimeNs from;
  if (position > 0 && list[position - 1].first == index - 1) {
    from = model_->firings[list[position - 1].second].end;
  } else if (index == 0) {
    from = 0;  // The job's start.
  } else {
    return;  // The previous firing was not recorded (step window, cap): nothing to measure from.
  }
  const TimeNs to = firing.start;
  if (to <= from) return;

  const ActorFacts& facts = plan_.actors[static_cast<size_t>(actor)];
  struct Need {
    int32_t register_id;
    int64_t fill;
    TimeNs until;  // When it was satisfied; kUnknown: before the window, or never recorded.
  };
  std::vector<Need> inputs;
  for (int32_t id : facts.inputs) {
    const RegisterFacts& reg = plan_.registers[static_cast<size_t>(id)];
    const int64_t fill = plan::FillOf(index, facts.period, reg.period);
    inputs.push_back(Need{id, fill, Lookup(ready_, id, actor, fill)});
  }
  std::vector<Need> outputs;
  for (int32_t id : facts.outputs) {
    const RegisterFacts& reg = plan_.registers[static_cast<size_t>(id)];
    if (!plan::BeginsFill(index, facts.period, reg.period)) continue;
    const int64_t held =
        plan::PreviousFillInSlot(plan::FillOf(index, facts.period, reg.period), reg.slots);
    if (held < 0) continue;
    outputs.push_back(Need{id, held, Lookup(freed_, id, -1, held)});
  }
  std::vector<TimeNs> points = {from};
  for (const Need& need : inputs) {
    if (need.until > from && need.until < to) points.push_back(need.until);
  }
  for (const Need& need : outputs) {
    if (need.until > from && need.until < to) points.push_back(need.until);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  points.push_back(to);

  for (size_t i = 0; i + 1 < points.size(); ++i) {
    const TimeNs at = points[i];
    WaitRecord wait;
    wait.actor = actor;
    wait.firing = index;
    wait.start = at;
    wait.end = points[i + 1];
    auto starved = std::find_if(inputs.begin(), inputs.end(),
                                [at](const Need& need) { return need.until > at; });
    auto blocked = std::find_if(outputs.begin(), outputs.end(),
                                [at](const Need& need) { return need.until > at; });
    if (starved != inputs.end()) {
      wait.kind = WaitKind::kStarved;
      wait.register_id = starved->register_id;
      wait.sequence = starved->fill;
      wait.waiting_on.push_back(
          plan_.registers[static_cast<size_t>(starved->register_id)].producer);
    } else if (blocked != outputs.end()) {
      wait.kind = WaitKind::kBlocked;
      wait.register_id = blocked->register_id;
      wait.sequence = blocked->fill;
      const RegisterFacts& reg = plan_.registers[static_cast<size_t>(blocked->register_id)];
      std::vector<int32_t> consumers = reg.consumers;
      if (reg.phase1_consumer >= 0) consumers.push_back(reg.phase1_consumer);
      for (int32_t consumer : consumers) {
        const TimeNs released = Lookup(release_, blocked->register_id, consumer, blocked->fill);
        if (released == kUnknown || released > at) wait.waiting_on.push_back(consumer);
      }
    } else {
      wait.kind = WaitKind::kQueued;
    }
    AddWait(std::move(wait));
  }
}

void Analysis::DeriveCounters() {
  struct Change {
    TimeNs time;
    int delta;
  };
  std::vector<std::vector<Change>> changes(plan_.registers.size());
  std::vector<int> initial(plan_.registers.size(), 0);
  for (size_t r = 0; r < plan_.registers.size(); ++r) {
    const RegisterFacts& reg = plan_.registers[r];
    const ActorFacts& producer = plan_.actors[static_cast<size_t>(reg.producer)];
    for (const auto& [index, record] : by_actor_[static_cast<size_t>(reg.producer)]) {
      if (plan::BeginsFill(index, producer.period, reg.period)) {
        changes[r].push_back(Change{model_->firings[record].launch, +1});
      }
    }
  }
  for (const Free& free : frees_) {
    const RegisterFacts& reg = plan_.registers[static_cast<size_t>(free.register_id)];
    const ActorFacts& producer = plan_.actors[static_cast<size_t>(reg.producer)];
    changes[static_cast<size_t>(free.register_id)].push_back(Change{free.time, -1});
    // A fill begun before the recording started still held its slot when it did.
    const int64_t beginning = free.fill * reg.period / producer.period;
    if (FindFiring(reg.producer, beginning) == nullptr)
      ++initial[static_cast<size_t>(free.register_id)];
  }
  for (size_t r = 0; r < changes.size(); ++r) {
    std::vector<Change>& list = changes[r];
    if (list.empty()) continue;
    // Frees before begins at one instant: a slot is taken again only after it came back.
    std::sort(list.begin(), list.end(), [](const Change& a, const Change& b) {
      return a.time != b.time ? a.time < b.time : a.delta < b.delta;
    });
    int occupied = initial[r];
    const int32_t id = static_cast<int32_t>(r);
    model_->counters.push_back(CounterRecord{id, std::min<TimeNs>(0, list.front().time), occupied});
    for (const Change& change : list) {
      occupied = std::max(0, occupied + change.delta);
      CounterRecord& last = model_->counters.back();
      if (last.register_id == id && last.time == change.time) {
        last.occupied = occupied;
      } else {
        model_->counters.push_back(CounterRecord{id, change.time, occupied});
      }
    }
  }
  std::stable_sort(model_->counters.begin(), model_->counters.end(),
                   [](const CounterRecord& a, const CounterRecord& b) { return a.time < b.time; });
}

void Analysis::DeriveFlows() {
  for (const Ready& ready : readies_) {
    const RegisterFacts& reg = plan_.registers[static_cast<size_t>(ready.register_id)];
    const ActorFacts& producer = plan_.actors[static_cast<size_t>(ready.producer)];
    const ActorFacts& consumer = plan_.actors[static_cast<size_t>(ready.consumer)];
    FlowRecord flow;
    flow.register_id = ready.register_id;
    flow.sequence = ready.fill;
    flow.producer = ready.producer;
    flow.producer_firing = plan::CompletingFiring(ready.fill, producer.period, reg.period);
    flow.consumer = ready.consumer;
    flow.consumer_firing = plan::FirstReadingFiring(ready.fill, consumer.period, reg.period);
    flow.sent = ready.time;
    if (FindFiring(flow.consumer, flow.consumer_firing) == nullptr) {
      continue;  // The consumer's end lies outside the recording: no arrow.
    }
    model_->flows.push_back(flow);
  }
  std::stable_sort(model_->flows.begin(), model_->flows.end(),
                   [](const FlowRecord& a, const FlowRecord& b) { return a.sent < b.sent; });
}

}  // namespace

StatusOr<TraceModel> BuildTraceModel(const TraceLog& log) {
  SOFTWIRE_RETURN_IF_ERROR(CheckPlanFacts(log.plan));
  TraceModel model;
  model.plan = log.plan;
  model.info = log.info;
  Analysis(log, &model).Run();
  return model;
}

}  // namespace trace
}  // namespace softwire
