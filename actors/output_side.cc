#include "actors/output_side.h"

#include <glog/logging.h>

#include <algorithm>
#include <string>

#include "plan/labels.h"

namespace softwire {
namespace actors {

OutputSide::OutputSide(const ActorDescription* actor) : actor_(actor), period_(actor->period) {
  const int64_t total_pieces = actor->firings * actor->period;
  for (const OutputDescription& description : actor->outputs) {
    Output output;
    output.ratio = plan::FiringsPerFill(period_, description.period);
    output.total_fills = plan::FillCount(total_pieces, description.period);
    output.slots = description.slots;
    output.first_consumer = static_cast<int>(consumers_.size());
    output.consumer_count = static_cast<int>(description.consumers.size());
    output.first_slot = static_cast<int>(remaining_releases_.size());
    for (size_t c = 0; c < description.consumers.size(); ++c) {
      Consumer consumer;
      consumer.actor = description.consumers[c].actor;
      consumer.phase = description.consumers[c].phase;
      consumer.ready_at_launch = description.consumers[c].ready_at_launch;
      consumers_.push_back(consumer);
      if (description.consumers[c].phase == 0) {
        ++output.phase0_count;
        if (consumer.ready_at_launch) ++output.ready_at_launch_count;
      } else {
        output.writer = static_cast<int>(c);
      }
    }
    registers_.push_back(description.register_id);
    outputs_offered_at_launch_ += output.ready_at_launch_count > 0 ? 1 : 0;
    outputs_.push_back(output);
    remaining_releases_.resize(remaining_releases_.size() + description.slots, 0);
  }
}

int OutputSide::FindOutput(RegisterId register_id) const {
  for (size_t i = 0; i < registers_.size(); ++i) {
    if (registers_[i] == register_id) return static_cast<int>(i);
  }
  return -1;
}

int OutputSide::FindConsumer(int output, ActorId actor) const {
  const Output& state = outputs_[output];
  for (int c = 0; c < state.consumer_count; ++c) {
    if (consumers_[state.first_consumer + c].actor == actor) return c;
  }
  return -1;
}

int OutputSide::FirstBlockedOutput(int64_t index) const {
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const Output& state = outputs_[o];
    if (!plan::FiringBeginsFill(index, state.ratio)) continue;  // Continues a held fill.
    if (!plan::SlotFreeFor(FillOf(state, index), state.freed, state.slots)) {
      return static_cast<int>(o);
    }
  }
  return -1;
}

void OutputSide::BeginFiring(int64_t index, std::vector<SlotBinding>* bindings,
                             std::vector<bool>* fill_begins) {
  for (size_t o = 0; o < outputs_.size(); ++o) {
    Output& state = outputs_[o];
    const int64_t fill = FillOf(state, index);
    const bool begins = plan::FiringBeginsFill(index, state.ratio);
    if (begins) {
      CHECK_EQ(state.begun, fill) << actor_->name << ": fills begin in order";
      ++state.begun;
      state.last_begun_slot = state.begun_slot;
      if (++state.begun_slot == state.slots) state.begun_slot = 0;
    }
    // A continuing firing writes the fill begun last.
    bindings->push_back(
        SlotBinding{registers_[o], static_cast<int32_t>(state.last_begun_slot), fill});
    fill_begins->push_back(begins);
  }
}

void OutputSide::SendReady(int output, int consumer, int64_t fill, int slot, Outbox* outbox) {
  Consumer& target = consumers_[outputs_[output].first_consumer + consumer];
  OutgoingMessage message;
  message.to = target.actor;
  message.Set(Ready{registers_[output], static_cast<int32_t>(slot), fill});
  outbox->messages.push_back(message);
  ++target.readies_sent;
}

void OutputSide::SendEndOfStream(int output, int consumer, Outbox* outbox) {
  Consumer& target = consumers_[outputs_[output].first_consumer + consumer];
  OutgoingMessage message;
  message.to = target.actor;
  message.Set(EndOfStream{registers_[output]});
  outbox->messages.push_back(message);
  target.end_sent = true;
}

void OutputSide::FreeFill(int output, int64_t fill) {
  Output& state = outputs_[output];
  CHECK_EQ(state.freed, fill) << actor_->name << ": fills free in order";
  if (++state.freed == state.total_fills) ++returned_outputs_;
}

void OutputSide::OfferAtLaunch(int64_t index, Outbox* outbox) {
  if (outputs_offered_at_launch_ == 0) return;
  for (size_t o = 0; o < outputs_.size(); ++o) {
    Output& state = outputs_[o];
    if (state.ready_at_launch_count == 0 || !plan::FiringEndsFill(index, state.ratio)) continue;
    // The launching firing ends the fill begun last. Its readers on this queue may launch now:
    // the queue runs their kernels after this one.
    const int output = static_cast<int>(o);
    AwaitReleases(output, state.last_begun_slot);
    for (int c = 0; c < state.consumer_count; ++c) {
      const Consumer& consumer = consumers_[state.first_consumer + c];
      if (consumer.phase == 0 && consumer.ready_at_launch) {
        SendReady(output, c, FillOf(state, index), state.last_begun_slot, outbox);
      }
    }
  }
}

void OutputSide::CompleteFiring(int64_t index, Outbox* outbox) {
  for (size_t o = 0; o < outputs_.size(); ++o) {
    Output& state = outputs_[o];
    if (!plan::FiringEndsFill(index, state.ratio)) continue;  // Fill continues.
    const int output = static_cast<int>(o);
    const int64_t fill = state.completed++;
    const int slot = state.completed_slot;
    if (++state.completed_slot == state.slots) state.completed_slot = 0;
    const bool offered_at_launch = state.ready_at_launch_count > 0;
    // Offered at launch, the fill may already be freed and its slot begun again: its count
    // of releases was set then, and only the readers not yet offered it get a Ready now.
    if (!offered_at_launch) AwaitReleases(output, slot);
    for (int c = 0; c < state.consumer_count; ++c) {
      const Consumer& consumer = consumers_[state.first_consumer + c];
      if (consumer.phase == 0 && !consumer.ready_at_launch) {
        SendReady(output, c, fill, slot, outbox);
      }
    }
    const int writers = state.writer >= 0 ? 1 : 0;
    if (state.phase0_count == 0 && writers == 1)
      SendReady(output, state.writer, fill, slot, outbox);
    if (state.phase0_count + writers == 0) FreeFill(output, fill);  // Nobody reads it.
  }
}

void OutputSide::EndStreams(Outbox* outbox) {
  streams_ended_ = true;
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const Output& state = outputs_[o];
    for (int c = 0; c < state.consumer_count; ++c) {
      const Consumer& consumer = consumers_[state.first_consumer + c];
      if (consumer.readies_sent == state.total_fills) {
        SendEndOfStream(static_cast<int>(o), c, outbox);
      }
    }
  }
}

Status OutputSide::Violation(int output, const std::string& what) const {
  const OutputDescription& description = actor_->outputs[output];
  return InvalidArgumentError(
      plan::ActorLabel(actor_->name, actor_->id) + ": " +
      plan::RegisterLabel(description.register_name, description.register_id) + ": " + what);
}

Status OutputSide::AcceptRelease(ActorId from, const Release& release, Outbox* outbox) {
  const int output = FindOutput(release.register_id);
  if (output < 0) {
    return InvalidArgumentError(plan::ActorLabel(actor_->name, actor_->id) +
                                ": Release of register " + std::to_string(release.register_id) +
                                " from actor " + std::to_string(from) +
                                ", but it does not write that register");
  }
  const int consumer_index = FindConsumer(output, from);
  if (consumer_index < 0) {
    return Violation(output,
                     "Release from actor " + std::to_string(from) + ", which is not its consumer");
  }
  Output& state = outputs_[output];
  Consumer& consumer = consumers_[state.first_consumer + consumer_index];
  const int slots = state.slots;
  const bool wrong_slot =
      slots == 1 ? release.slot != 0 : release.slot != plan::SlotOf(release.sequence, slots);
  if (consumer.released == consumer.readies_sent || release.sequence != consumer.released ||
      wrong_slot) {
    const std::string held =
        consumer.released == consumer.readies_sent
            ? "it holds none"
            : "it holds fill " + std::to_string(consumer.released) + " in slot " +
                  std::to_string(plan::SlotOf(consumer.released, slots)) + " first";
    return Violation(output, "Release(slot " + std::to_string(release.slot) + ", seq " +
                                 std::to_string(release.sequence) + ") from actor " +
                                 std::to_string(from) + " of a slot it does not hold: " + held);
  }
  ++consumer.released;
  int& remaining = remaining_releases_[state.first_slot + release.slot];
  --remaining;
  if (consumer.phase == 0 && state.writer >= 0 && remaining == 1) {
    // Every reader is done with the fill: the in-place writer may have it now.
    SendReady(output, state.writer, release.sequence, release.slot, outbox);
    const Consumer& writer = consumers_[state.first_consumer + state.writer];
    if (streams_ended_ && writer.readies_sent == state.total_fills && !writer.end_sent) {
      SendEndOfStream(output, state.writer, outbox);
    }
  }
  if (remaining == 0) FreeFill(output, release.sequence);
  return Status::Ok();
}

int OutputSide::occupied_slots(int output) const {
  return static_cast<int>(outputs_[output].begun - outputs_[output].freed);
}

int OutputSide::FirstUnreturnedOutput() const {
  for (size_t o = 0; o < outputs_.size(); ++o) {
    if (outputs_[o].freed < outputs_[o].total_fills) return static_cast<int>(o);
  }
  return -1;
}

void OutputSide::AppendHolders(int output, std::vector<ActorId>* holders) const {
  const Output& state = outputs_[output];
  const std::vector<ConsumerDescription>& consumers = actor_->outputs[output].consumers;
  for (size_t c = 0; c < consumers.size(); ++c) {
    if (consumers[c].phase == 0 && consumers_[state.first_consumer + c].released <= state.freed) {
      holders->push_back(consumers[c].actor);
    }
  }
  if (holders->empty() && state.writer >= 0) holders->push_back(consumers[state.writer].actor);
}

}  // namespace actors
}  // namespace softwire
