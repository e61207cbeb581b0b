#include "actors/input_side.h"

#include <algorithm>
#include <string>

#include "plan/labels.h"

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
      state.register_id = description.register_id;
      state.producer = description.producer;
      state.ratio = plan::FiringsPerFill(period_, description.period);
      state.slots = description.slots;
      state.input = input;
      state.total_fills = plan::FillCount(total_pieces, description.period);
      // MarkStreamOrderedEdges marks every listing of one register alike.
      state.release_at_launch = description.release_at_launch;
      channels_released_at_launch_ += state.release_at_launch ? 1 : 0;
      channels_.push_back(state);
    }
    channel_of_input_.push_back(channel);
  }
  empty_channels_ = static_cast<int>(channels_.size());
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
  return FillOf(channels_[static_cast<size_t>(channel)], index);
}

Status InputSide::Violation(int channel, const std::string& what) const {
  const InputDescription& input = channel_input(channel);
  return InvalidArgumentError(plan::ActorLabel(actor_->name, actor_->id) + ": " +
                              plan::RegisterLabel(input.register_name, input.register_id) + ": " +
                              what);
}

Status InputSide::CheckSender(int channel, ActorId from, const char* message_name,
                              RegisterId register_id) const {
  if (channel < 0) {
    return InvalidArgumentError(plan::ActorLabel(actor_->name, actor_->id) + ": " + message_name +
                                " of register " + std::to_string(register_id) + " from actor " +
                                std::to_string(from) + ", but it does not read that register");
  }
  const ActorId producer = channels_[channel].producer;
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
  const int slots = state.slots;
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
  if (ready.slot != state.received_slot) {  // received_slot == sequence % slots here.
    return Violation(channel, what() + " in the wrong slot: fill " +
                                  std::to_string(ready.sequence) + " lies in slot " +
                                  std::to_string(plan::SlotOf(ready.sequence, slots)));
  }
  if (state.received - state.released >= slots) {
    return Violation(channel,
                     what() + " while all " + std::to_string(slots) + " slots are still held");
  }
  if (state.received == state.released) --empty_channels_;
  ++state.received;
  Advance(slots, &state.received_slot);
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

int InputSide::FirstMissingFill(int64_t index, bool oldest) const {
  if (oldest && empty_channels_ == 0) return -1;  // Every channel holds the fill index needs.
  for (size_t i = 0; i < channels_.size(); ++i) {
    if (FillOf(channels_[i], index) >= channels_[i].received) return static_cast<int>(i);
  }
  return -1;
}

void InputSide::BindInputs(int64_t index, std::vector<SlotBinding>* bindings) const {
  for (size_t input = 0; input < channel_of_input_.size(); ++input) {
    const Channel& state = channels_[static_cast<size_t>(channel_of_input_[input])];
    const int64_t fill = FillOf(state, index);
    // The fill a launching firing reads is the oldest its channel holds.
    const int slot = fill == state.released ? state.released_slot
                                            : static_cast<int>(plan::SlotOf(fill, state.slots));
    bindings->push_back(SlotBinding{state.register_id, static_cast<int32_t>(slot), fill});
  }
}

void InputSide::ReleaseOldest(Channel* state, Outbox* outbox) {
  OutgoingMessage message;
  message.to = state->producer;
  message.Set(
      Release{state->register_id, static_cast<int32_t>(state->released_slot), state->released});
  outbox->messages.push_back(message);
  ++state->released;
  Advance(state->slots, &state->released_slot);
  if (state->released == state->received) ++empty_channels_;
}

void InputSide::ReleaseAtLaunch(int64_t index, Outbox* outbox) {
  if (channels_released_at_launch_ == 0) return;
  for (Channel& state : channels_) {
    // The last firing reading fill s launched: every read of it is on the queue, ahead of
    // whatever its next writer enqueues after this Release.
    if (state.release_at_launch && plan::FiringEndsFill(index, state.ratio)) {
      ReleaseOldest(&state, outbox);
    }
  }
}

void InputSide::ReleaseFinishedFills(int64_t index, Outbox* outbox) {
  for (Channel& state : channels_) {
    // Fill s is needed by firings up to the one covering the fill's last piece.
    if (!state.release_at_launch && plan::FiringEndsFill(index, state.ratio)) {
      ReleaseOldest(&state, outbox);
    }
  }
}

}  // namespace actors
}  // namespace softwire
