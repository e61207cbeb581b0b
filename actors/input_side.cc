#include "actors/input_side.h"

#include <string>

namespace softwire {
namespace actors {

InputSide::InputSide(const ActorDescription* actor) : actor_(actor), period_(actor->period) {
  const int64_t total_pieces = actor->firings * actor->period;
  for (int input = 0; input < static_cast<int>(actor->inputs.size()); ++input) {
    const InputDescription& description = actor->inputs[input];
    int channel = FindChannel(description.register_id);
    if (channel < 0) {
      channel = static_cast<int>(channels_.size());
      channel_registers_.push_back(description.register_id);
      Channel state;
      state.input = input;
      state.total_fills = total_pieces / description.period;
      channels_.push_back(state);
    }
    channel_of_input_.push_back(channel);
  }
}

int InputSide::FindChannel(RegisterId register_id) const {
  // Actors read a handful of registers: a linear scan of ids beats any map here.
  for (size_t i = 0; i < channel_registers_.size(); ++i) {
    if (channel_registers_[i] == register_id) return static_cast<int>(i);
  }
  return -1;
}

const InputDescription& InputSide::channel_input(int channel) const {
  return actor_->inputs[channels_[channel].input];
}

int64_t InputSide::FillNeeded(int channel, int64_t index) const {
  return index * period_ / channel_input(channel).period;
}

Status InputSide::Violation(int channel, const std::string& what) const {
  const InputDescription& input = channel_input(channel);
  return InvalidArgumentError("actor '" + actor_->name + "' (" + std::to_string(actor_->id) +
                              "): register '" + input.register_name + "' (" +
                              std::to_string(input.register_id) + "): " + what);
}

Status InputSide::CheckSender(int channel, ActorId from, const char* message_name,
                              RegisterId register_id) const {
  if (channel < 0) {
    return InvalidArgumentError("actor '" + actor_->name + "' (" + std::to_string(actor_->id) +
                                "): " + message_name + " of register " +
                                std::to_string(register_id) + " from actor " +
                                std::to_string(from) + ", but it does not read that register");
  }
  const ActorId producer = channel_input(channel).producer;
  if (from != producer) {
    return Violation(channel, std::string(message_name) + " from actor " + std::to_string(from) +
                                  ", which is not its producer (actor " + std::to_string(producer) +
                                  ")");
  }
  if (channels_[channel].ended) {
    return Violation(channel, std::string(message_name) + " after EndOfStream");
  }
  return Status::Ok();
}

Status InputSide::AcceptReady(ActorId from, const Ready& ready) {
  const int channel = FindChannel(ready.register_id);
  SOFTWIRE_RETURN_IF_ERROR(CheckSender(channel, from, "Ready", ready.register_id));
  Channel& state = channels_[channel];
  const int slots = channel_input(channel).slots;
  // Built only on a violation: the accepted path allocates nothing.
  auto what = [&ready] {
    return "Ready(slot " + std::to_string(ready.slot) + ", seq " + std::to_string(ready.sequence) +
           ")";
  };
  if (ready.sequence != state.received) {
    return Violation(channel,
                     what() + " out of sequence: expected fill " + std::to_string(state.received));
  }
  if (ready.sequence >= state.total_fills) {
    return Violation(channel,
                     what() + " beyond the last fill " + std::to_string(state.total_fills - 1));
  }
  if (ready.slot != ready.sequence % slots) {
    return Violation(channel, what() + " in the wrong slot: fill " +
                                  std::to_string(ready.sequence) + " lies in slot " +
                                  std::to_string(ready.sequence % slots));
  }
  if (state.received - state.released >= slots) {
    return Violation(channel,
                     what() + " while all " + std::to_string(slots) + " slots are still held");
  }
  ++state.received;
  return Status::Ok();
}

Status InputSide::AcceptEndOfStream(ActorId from, const EndOfStream& end_of_stream) {
  const int channel = FindChannel(end_of_stream.register_id);
  SOFTWIRE_RETURN_IF_ERROR(CheckSender(channel, from, "EndOfStream", end_of_stream.register_id));
  Channel& state = channels_[channel];
  if (state.received != state.total_fills) {
    return Violation(channel, "EndOfStream after " + std::to_string(state.received) + " of " +
                                  std::to_string(state.total_fills) + " fills");
  }
  state.ended = true;
  ++ended_channels_;
  return Status::Ok();
}

int InputSide::FirstMissingFill(int64_t index) const {
  for (size_t i = 0; i < channels_.size(); ++i) {
    if (FillNeeded(static_cast<int>(i), index) >= channels_[i].received) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

void InputSide::BindInputs(int64_t index, std::vector<SlotBinding>* bindings) const {
  for (size_t input = 0; input < channel_of_input_.size(); ++input) {
    const int channel = channel_of_input_[input];
    const int64_t fill = FillNeeded(channel, index);
    bindings->push_back(SlotBinding{channel_registers_[channel],
                                    static_cast<int32_t>(fill % channel_input(channel).slots),
                                    fill});
  }
}

void InputSide::ReleaseFinishedFills(int64_t index, Outbox* outbox) {
  for (size_t i = 0; i < channels_.size(); ++i) {
    const InputDescription& input = channel_input(static_cast<int>(i));
    // Fill s is needed by firings up to the one covering the fill's last piece.
    if (((index + 1) * period_) % input.period != 0) continue;
    Channel& state = channels_[i];
    OutgoingMessage message;
    message.type = OutgoingMessage::Type::kRelease;
    message.to = input.producer;
    message.release = Release{input.register_id, static_cast<int32_t>(state.released % input.slots),
                              state.released};
    outbox->messages.push_back(message);
    ++state.released;
  }
}

}  // namespace actors
}  // namespace softwire
