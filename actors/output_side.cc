#include "actors/output_side.h"

#include <glog/logging.h>

#include <string>

namespace softwire {
namespace actors {

OutputSide::OutputSide(const ActorDescription* actor) : actor_(actor), period_(actor->period) {
  const int64_t total_pieces = actor->firings * actor->period;
  for (const OutputDescription& description : actor->outputs) {
    Output output;
    output.total_fills = total_pieces / description.period;
    output.first_consumer = static_cast<int>(consumers_.size());
    output.first_slot = static_cast<int>(remaining_releases_.size());
    for (size_t c = 0; c < description.consumers.size(); ++c) {
      if (description.consumers[c].phase == 0) {
        ++output.phase0_count;
      } else {
        output.writer = static_cast<int>(c);
      }
    }
    registers_.push_back(description.register_id);
    outputs_.push_back(output);
    consumers_.resize(consumers_.size() + description.consumers.size());
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
  const std::vector<ConsumerDescription>& consumers = actor_->outputs[output].consumers;
  for (size_t c = 0; c < consumers.size(); ++c) {
    if (consumers[c].actor == actor) return static_cast<int>(c);
  }
  return -1;
}

int OutputSide::FirstBlockedOutput(int64_t index) const {
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const OutputDescription& description = actor_->outputs[o];
    if ((index * period_) % description.period != 0) continue;  // Continues a held fill.
    const int64_t fill = index * period_ / description.period;
    if (fill >= outputs_[o].freed + description.slots) return static_cast<int>(o);
  }
  return -1;
}

void OutputSide::BeginFiring(int64_t index, std::vector<SlotBinding>* bindings,
                             std::vector<bool>* fill_begins) {
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const OutputDescription& description = actor_->outputs[o];
    const int64_t fill = index * period_ / description.period;
    const bool begins = (index * period_) % description.period == 0;
    if (begins) {
      CHECK_EQ(outputs_[o].begun, fill) << actor_->name << ": fills begin in order";
      ++outputs_[o].begun;
    }
    bindings->push_back(
        SlotBinding{description.register_id, static_cast<int32_t>(fill % description.slots), fill});
    fill_begins->push_back(begins);
  }
}

void OutputSide::SendReady(int output, int consumer, int64_t fill, Outbox* outbox) {
  const OutputDescription& description = actor_->outputs[output];
  OutgoingMessage message;
  message.type = OutgoingMessage::Type::kReady;
  message.to = description.consumers[consumer].actor;
  message.ready =
      Ready{description.register_id, static_cast<int32_t>(fill % description.slots), fill};
  outbox->messages.push_back(message);
  ++consumers_[outputs_[output].first_consumer + consumer].readies_sent;
}

void OutputSide::SendEndOfStream(int output, int consumer, Outbox* outbox) {
  OutgoingMessage message;
  message.type = OutgoingMessage::Type::kEndOfStream;
  message.to = actor_->outputs[output].consumers[consumer].actor;
  message.end_of_stream = EndOfStream{registers_[output]};
  outbox->messages.push_back(message);
  consumers_[outputs_[output].first_consumer + consumer].end_sent = true;
}

void OutputSide::FreeFill(int output, int64_t fill) {
  Output& state = outputs_[output];
  CHECK_EQ(state.freed, fill) << actor_->name << ": fills free in order";
  if (++state.freed == state.total_fills) ++returned_outputs_;
}

void OutputSide::CompleteFiring(int64_t index, Outbox* outbox) {
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const OutputDescription& description = actor_->outputs[o];
    if (((index + 1) * period_) % description.period != 0) continue;  // Fill continues.
    Output& state = outputs_[o];
    const int output = static_cast<int>(o);
    const int64_t fill = state.completed++;
    const int writers = state.writer >= 0 ? 1 : 0;
    remaining_releases_[state.first_slot + fill % description.slots] = state.phase0_count + writers;
    for (size_t c = 0; c < description.consumers.size(); ++c) {
      if (description.consumers[c].phase == 0) SendReady(output, static_cast<int>(c), fill, outbox);
    }
    if (state.phase0_count == 0 && writers == 1) SendReady(output, state.writer, fill, outbox);
    if (state.phase0_count + writers == 0) FreeFill(output, fill);  // Nobody reads it.
  }
}

void OutputSide::EndStreams(Outbox* outbox) {
  streams_ended_ = true;
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const Output& state = outputs_[o];
    for (size_t c = 0; c < actor_->outputs[o].consumers.size(); ++c) {
      const Consumer& consumer = consumers_[state.first_consumer + c];
      if (consumer.readies_sent == state.total_fills) {
        SendEndOfStream(static_cast<int>(o), static_cast<int>(c), outbox);
      }
    }
  }
}

Status OutputSide::Violation(int output, const std::string& what) const {
  const OutputDescription& description = actor_->outputs[output];
  return InvalidArgumentError("actor '" + actor_->name + "' (" + std::to_string(actor_->id) +
                              "): register '" + description.register_name + "' (" +
                              std::to_string(description.register_id) + "): " + what);
}

Status OutputSide::AcceptRelease(ActorId from, const Release& release, Outbox* outbox) {
  const int output = FindOutput(release.register_id);
  if (output < 0) {
    return InvalidArgumentError("actor '" + actor_->name + "' (" + std::to_string(actor_->id) +
                                "): Release of register " + std::to_string(release.register_id) +
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
  const int slots = actor_->outputs[output].slots;
  if (consumer.released == consumer.readies_sent || release.sequence != consumer.released ||
      release.slot != release.sequence % slots) {
    const std::string held = consumer.released == consumer.readies_sent
                                 ? "it holds none"
                                 : "it holds fill " + std::to_string(consumer.released) +
                                       " in slot " + std::to_string(consumer.released % slots) +
                                       " first";
    return Violation(output, "Release(slot " + std::to_string(release.slot) + ", seq " +
                                 std::to_string(release.sequence) + ") from actor " +
                                 std::to_string(from) + " of a slot it does not hold: " + held);
  }
  ++consumer.released;
  int& remaining = remaining_releases_[state.first_slot + release.slot];
  --remaining;
  const bool reader = actor_->outputs[output].consumers[consumer_index].phase == 0;
  if (reader && state.writer >= 0 && remaining == 1) {
    // Every reader is done with the fill: the in-place writer may have it now.
    SendReady(output, state.writer, release.sequence, outbox);
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
