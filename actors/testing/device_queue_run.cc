#include "actors/testing/device_queue_run.h"

#include <glog/logging.h>

#include <algorithm>
#include <deque>
#include <random>
#include <set>
#include <tuple>
#include <utility>

#include "actors/testing/protocol_test_host.h"
#include "plan/fill_arithmetic.h"
#include "plan/labels.h"

namespace softwire {
namespace actors {
namespace testing {
namespace {

bool SameBindings(const std::vector<SlotBinding>& a, const std::vector<SlotBinding>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].register_id != b[i].register_id || a[i].slot != b[i].slot ||
        a[i].sequence != b[i].sequence) {
      return false;
    }
  }
  return true;
}

int64_t Mix(int64_t seed, int64_t value) {
  uint64_t x = static_cast<uint64_t>(seed) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(value);
  x ^= x >> 29;
  return static_cast<int64_t>(x * 0xBF58476D1CE4E5B9ull);
}

using FiringKey = std::pair<ActorId, int64_t>;   // Actor, firing index.
using FillKey = std::pair<RegisterId, int64_t>;  // Register, fill.

// What one slot holds as far as executed kernels wrote it.
struct SlotState {
  int64_t fill = -1;
  int64_t writes = 0;  // Executed firings of the producer that wrote `fill`.
  int64_t value = 0;
};

// The registers' slots as executed kernels left them; checks each execution against them.
class ExecutionModel {
 public:
  ExecutionModel(const std::vector<ActorDescription>* actors, QueueRunResult* result)
      : actors_(actors), result_(result) {
    for (const ActorDescription& actor : *actors) {
      for (const OutputDescription& output : actor.outputs) {
        Register& state = registers_[output.register_id];
        state.output = &output;
        state.slots.resize(static_cast<size_t>(output.slots));
        state.writes_per_fill = plan::FiringsPerFill(actor.period, output.period);
        for (const ConsumerDescription& consumer : output.consumers) {
          if (consumer.phase == 1) {
            state.has_writer = true;
            continue;
          }
          const int64_t consumer_period = (*actors)[static_cast<size_t>(consumer.actor)].period;
          state.reads_per_fill += plan::FiringsPerFill(consumer_period, output.period);
        }
      }
    }
  }

  void OnLaunch(ActorId id, const Firing& firing) {
    for (const SlotBinding& binding : firing.inputs) {
      const Register& state = registers_.at(binding.register_id);
      const SlotState& slot = state.slots[static_cast<size_t>(binding.slot)];
      if (slot.fill != binding.sequence || slot.writes < state.writes_per_fill) {
        ++result_->launches_ahead_of_inputs;
        break;
      }
    }
    launched_[{id, firing.index}] = firing;
  }

  void OnSend(ActorId from, const OutgoingMessage& message) {
    if (message.type == MessageType::kRelease) {
      released_.insert({from, message.register_id, message.sequence});
    }
  }

  // The kernel of firing `index` of `id` runs now: reads its inputs, writes its outputs.
  void Execute(ActorId id, int64_t index) {
    auto found = launched_.find({id, index});
    CHECK(found != launched_.end()) << "executes a firing never launched";
    const Firing firing = std::move(found->second);
    launched_.erase(found);
    const ActorDescription& actor = (*actors_)[static_cast<size_t>(id)];
    const std::string who =
        plan::ActorLabel(actor.name, actor.id) + " firing " + std::to_string(index) + " executes";
    ExecutedFiring record;
    record.inputs = firing.inputs;
    record.outputs = firing.outputs;
    int64_t mixed = index;
    for (size_t i = 0; i < firing.inputs.size(); ++i) {
      const SlotBinding& binding = firing.inputs[i];
      const SlotState& slot = CheckedInput(who, actor.inputs[i], binding);
      record.read.push_back(slot.value);
      mixed = Mix(mixed, slot.value);
    }
    for (size_t o = 0; o < firing.outputs.size(); ++o) {
      const bool begins = firing.output_fill_begins[o];
      SlotState& slot = CheckedOutput(who, firing.outputs[o], begins, index);
      if (actor.kind == ActorKind::kAccumulate) {
        // An accumulation of hashes: wraps around (unsigned), as a hash may.
        slot.value = begins ? mixed
                            : static_cast<int64_t>(static_cast<uint64_t>(slot.value) +
                                                   static_cast<uint64_t>(mixed));
      } else if (actor.kind != ActorKind::kVariable || index == 0) {
        slot.value = Mix(mixed, static_cast<int64_t>(o));  // A variable writes only firing 0.
      }
      record.written.push_back(slot.value);
    }
    for (const SlotBinding& binding : firing.inputs) {
      if (released_.count({id, binding.register_id, binding.sequence}) > 0) {
        ++result_->releases_ahead_of_reads;  // Its reader's Release went at launch.
        break;
      }
    }
    std::vector<RegisterId> counted;  // A register listed twice is read once per firing.
    for (size_t i = 0; i < firing.inputs.size(); ++i) {
      const SlotBinding& binding = firing.inputs[i];
      if (actor.inputs[i].phase == 1) {  // The optimizer changes the variable in place.
        SlotState& slot = registers_.at(binding.register_id).slots[binding.slot];
        slot.value = Mix(slot.value, mixed);
        record.written.push_back(slot.value);
        in_place_written_.insert({binding.register_id, binding.sequence});
      } else if (std::find(counted.begin(), counted.end(), binding.register_id) == counted.end()) {
        counted.push_back(binding.register_id);
        ++reads_executed_[{binding.register_id, binding.sequence}];
      }
    }
    result_->executed[static_cast<size_t>(id)][index] = std::move(record);
  }

 private:
  struct Register {
    const OutputDescription* output = nullptr;
    std::vector<SlotState> slots;
    int64_t writes_per_fill = 1;
    int64_t reads_per_fill = 0;  // Firings of phase-0 consumers reading each fill.
    bool has_writer = false;
  };

  void Violate(const std::string& what) { result_->violations.push_back(what); }

  std::string Label(RegisterId id) const {
    return plan::RegisterLabel(registers_.at(id).output->register_name, id);
  }

  // Every reader and the in-place writer of fill `fill` executed.
  bool FillConsumed(RegisterId id, int64_t fill) const {
    const Register& state = registers_.at(id);
    auto reads = reads_executed_.find({id, fill});
    const int64_t executed = reads == reads_executed_.end() ? 0 : reads->second;
    return executed == state.reads_per_fill &&
           (!state.has_writer || in_place_written_.count({id, fill}) > 0);
  }

  const SlotState& CheckedInput(const std::string& who, const InputDescription& input,
                                const SlotBinding& binding) {
    const Register& state = registers_.at(binding.register_id);
    const SlotState& slot = state.slots[static_cast<size_t>(binding.slot)];
    const std::string what = who + " reading " + Label(binding.register_id) + " fill " +
                             std::to_string(binding.sequence) + " in slot " +
                             std::to_string(binding.slot);
    if (slot.fill != binding.sequence) {
      Violate(what + ", but the slot holds fill " + std::to_string(slot.fill));
    } else if (slot.writes != state.writes_per_fill) {
      Violate(what + " after " + std::to_string(slot.writes) + " of its producer's " +
              std::to_string(state.writes_per_fill) + " writes of it executed");
    } else if (input.phase == 1) {
      auto reads = reads_executed_.find({binding.register_id, binding.sequence});
      const int64_t executed = reads == reads_executed_.end() ? 0 : reads->second;
      if (executed != state.reads_per_fill) {
        Violate(what + " in place after " + std::to_string(executed) + " of its " +
                std::to_string(state.reads_per_fill) + " reads executed");
      }
    }
    return slot;
  }

  SlotState& CheckedOutput(const std::string& who, const SlotBinding& binding, bool begins,
                           int64_t index) {
    Register& state = registers_.at(binding.register_id);
    SlotState& slot = state.slots[static_cast<size_t>(binding.slot)];
    const std::string what = who + " writing " + Label(binding.register_id) + " fill " +
                             std::to_string(binding.sequence) + " in slot " +
                             std::to_string(binding.slot);
    if (begins) {
      if (slot.fill >= 0 && !FillConsumed(binding.register_id, slot.fill)) {
        Violate(what + ", but fill " + std::to_string(slot.fill) +
                " there still has a read or in-place write to execute");
      }
      slot.fill = binding.sequence;
      slot.writes = 0;
    } else if (slot.fill != binding.sequence) {
      Violate(what + ", continuing a fill the slot no longer holds (fill " +
              std::to_string(slot.fill) + ")");
    }
    const int64_t earlier_writes = index - binding.sequence * state.writes_per_fill;
    if (slot.writes != earlier_writes) {
      Violate(what + " after " + std::to_string(slot.writes) + " of the " +
              std::to_string(earlier_writes) + " earlier writes of the fill executed");
    }
    ++slot.writes;
    return slot;
  }

  const std::vector<ActorDescription>* actors_;
  QueueRunResult* result_;
  std::map<RegisterId, Register> registers_;
  std::map<FillKey, int64_t> reads_executed_;
  std::set<FillKey> in_place_written_;
  std::map<FiringKey, Firing> launched_;
  std::set<std::tuple<ActorId, RegisterId, int64_t>> released_;  // Releases sent so far.
};

std::string DescribeUnfinished(const ActorProtocol& protocol) {
  const WaitState wait = protocol.DescribeWait();
  std::string text = plan::ActorLabel(protocol.description().name, protocol.description().id) +
                     " did not finish: " + WaitKindName(wait.kind) + " at firing " +
                     std::to_string(wait.next_firing) + " on register " +
                     std::to_string(wait.register_id) + " fill " + std::to_string(wait.sequence);
  for (ActorId actor : wait.waiting_on) text += ", waiting on " + std::to_string(actor);
  return text;
}

}  // namespace

bool ExecutedFiring::operator==(const ExecutedFiring& other) const {
  return SameBindings(inputs, other.inputs) && SameBindings(outputs, other.outputs) &&
         read == other.read && written == other.written;
}

QueueRunResult RunOnDeviceQueues(const std::vector<ActorDescription>& actors,
                                 const std::vector<int64_t>& queue_of, uint64_t seed) {
  CHECK_EQ(queue_of.size(), actors.size());
  QueueRunResult result;
  result.executed.resize(actors.size());
  ExecutionModel model(&actors, &result);
  std::map<int64_t, std::deque<FiringKey>> queues;  // Launched, not executed, per queue.
  std::vector<FiringKey> pool;                      // Launched, not executed, no queue.
  std::vector<FiringKey> executed;                  // Executed, completion not reported.
  ProtocolTestHost::Options options;
  options.order = ProtocolTestHost::Order::kRandom;
  options.seed = seed;
  options.complete_immediately = false;
  options.step_completes_firings = false;
  options.record = false;
  options.on_launch = [&](ActorId id, const Firing& firing) {
    model.OnLaunch(id, firing);
    const int64_t key = queue_of[static_cast<size_t>(id)];
    if (key >= 0) {
      queues[key].emplace_back(id, firing.index);
    } else {
      pool.emplace_back(id, firing.index);
    }
  };
  options.on_send = [&](ActorId from, const OutgoingMessage& m) { model.OnSend(from, m); };
  ProtocolTestHost host(actors, options);
  std::mt19937_64 random(seed * 0x2545F4914F6CDD1Dull + 1);
  host.Start();
  // Each run weighs the three kinds of step differently: a device that lags far behind the
  // host (launches and messages race ahead of the kernels), completions reported late, or the
  // reverse.
  auto weight = [&random] { return std::uniform_int_distribution<int>(1, 8)(random); };
  const int message_weight = weight();
  const int execute_weight = weight();
  const int report_weight = weight();
  std::vector<int64_t> heads;
  while (result.violations.empty()) {
    heads.clear();
    for (const auto& [key, queue] : queues) {
      if (!queue.empty()) heads.push_back(key);
    }
    const size_t messages = static_cast<size_t>(host.pending_messages());
    const size_t executable = heads.size() + pool.size();
    const int weights[3] = {messages > 0 ? message_weight : 0, executable > 0 ? execute_weight : 0,
                            executed.empty() ? 0 : report_weight};
    const int total = weights[0] + weights[1] + weights[2];
    if (total == 0) break;
    int kind = std::uniform_int_distribution<int>(0, total - 1)(random);
    Status status;
    if (kind < weights[0]) {
      status = host.Step().status();
    } else if (kind < weights[0] + weights[1]) {
      size_t choice = std::uniform_int_distribution<size_t>(0, executable - 1)(random);
      if (choice < heads.size()) {
        std::deque<FiringKey>& queue = queues[heads[choice]];
        executed.push_back(queue.front());
        queue.pop_front();
      } else {
        choice -= heads.size();
        executed.push_back(pool[choice]);
        pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(choice));
      }
      model.Execute(executed.back().first, executed.back().second);
    } else {
      const size_t choice = std::uniform_int_distribution<size_t>(0, executed.size() - 1)(random);
      const FiringKey firing = executed[choice];
      executed.erase(executed.begin() + static_cast<std::ptrdiff_t>(choice));
      status = host.CompleteFiring(firing.first, firing.second);
    }
    if (!status.ok()) result.violations.push_back(status.ToString());
    // What one actor reports it waits for agrees with its state (and the report's own
    // checks hold) under early messages too.
    const ActorDescription& sampled =
        actors[std::uniform_int_distribution<size_t>(0, actors.size() - 1)(random)];
    const WaitState wait = host.protocol(sampled.name).DescribeWait();
    const bool running = !host.in_flight(sampled.id).empty();
    if ((wait.kind == WaitState::Kind::kRunning) != running) {
      result.violations.push_back(sampled.name + " reports " + WaitKindName(wait.kind) + " with " +
                                  std::to_string(host.in_flight(sampled.id).size()) +
                                  " firings in flight");
    }
    for (const ActorDescription& actor : actors) {
      const int in_flight = static_cast<int>(host.in_flight(actor.id).size());
      result.most_in_flight = std::max(result.most_in_flight, in_flight);
      if (in_flight > actor.max_in_flight) {
        result.violations.push_back(actor.name + " has " + std::to_string(in_flight) +
                                    " firings in flight");
      }
      const ActorProtocol& protocol = host.protocol(actor.name);
      for (size_t o = 0; o < actor.outputs.size(); ++o) {
        if (protocol.occupied_slots(static_cast<int>(o)) > actor.outputs[o].slots) {
          result.violations.push_back(actor.name + " occupies more slots than " +
                                      actor.outputs[o].register_name + " has");
        }
      }
    }
  }
  if (!result.violations.empty()) return result;
  for (const ActorDescription& actor : actors) {
    const ActorProtocol& protocol = host.protocol(actor.name);
    if (!protocol.finished() || protocol.completed_firings() != actor.firings) {
      result.violations.push_back(DescribeUnfinished(protocol));
    }
  }
  return result;
}

}  // namespace testing
}  // namespace actors
}  // namespace softwire
