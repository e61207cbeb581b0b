// ActorProtocol composes the two halves of an actor's live state, InputSide (fills received and
// held) and OutputSide (slots begun, filled and released), with the firing loop: launch the
// next firing as soon as it has its fills and its slots, and on completion send Releases, then
// Readies, then (after the last firing) EndOfStream.
#include "actors/actor_protocol.h"

#include "actors/input_side.h"
#include "actors/output_side.h"
#include "plan/labels.h"

namespace softwire {
namespace actors {

const char* WaitKindName(WaitState::Kind kind) {
  switch (kind) {
    case WaitState::Kind::kRunning:
      return "running";
    case WaitState::Kind::kStarved:
      return "starved";
    case WaitState::Kind::kBlocked:
      return "blocked";
    case WaitState::Kind::kDraining:
      return "draining";
    case WaitState::Kind::kFinished:
      return "finished";
  }
  return "unknown";
}

class ActorProtocol::State {
 public:
  explicit State(const ActorDescription* actor) : actor(actor), inputs(actor), outputs(actor) {}

  // Launches the next firing when it may (docs/PROTOCOL.md, "Launch").
  void TryLaunch(Outbox* outbox) {
    if (!started || running || next_firing == actor->firings) return;
    if (inputs.FirstMissingFill(next_firing) >= 0) return;
    if (outputs.FirstBlockedOutput(next_firing) >= 0) return;
    Firing& firing = outbox->BeginLaunch();
    firing.index = next_firing;
    firing.first_piece = next_firing * actor->period;
    inputs.BindInputs(next_firing, &firing.inputs);
    outputs.BeginFiring(next_firing, &firing.outputs, &firing.output_fill_begins);
    running = true;
  }

  // Reports the transition to finished exactly once.
  void NoteFinished(Outbox* outbox) {
    if (finished || !IsFinished()) return;
    finished = true;
    outbox->finished = true;
  }

  bool IsFinished() const {
    return next_firing == actor->firings && !running && outputs.all_slots_back() &&
           inputs.all_ended();
  }

  WaitState DescribeWait() const;

  const ActorDescription* actor;
  InputSide inputs;
  OutputSide outputs;
  int64_t next_firing = 0;  // The running firing while `running`, else the next to launch.
  bool running = false;
  bool started = false;
  bool finished = false;
};

WaitState ActorProtocol::State::DescribeWait() const {
  WaitState wait;
  wait.next_firing = next_firing;
  if (finished) {
    wait.kind = WaitState::Kind::kFinished;
    return wait;
  }
  if (running) {
    wait.kind = WaitState::Kind::kRunning;
    return wait;
  }
  if (next_firing == actor->firings) {
    wait.kind = WaitState::Kind::kDraining;
    const int output = outputs.FirstUnreturnedOutput();
    if (output >= 0) {
      wait.register_id = actor->outputs[output].register_id;
      wait.sequence = outputs.oldest_unfreed_fill(output);
      outputs.AppendHolders(output, &wait.waiting_on);
      return wait;
    }
    for (int channel = 0; channel < inputs.channel_count(); ++channel) {
      if (inputs.ended(channel)) continue;
      wait.register_id = inputs.channel_input(channel).register_id;
      wait.waiting_on.push_back(inputs.channel_input(channel).producer);
      return wait;
    }
    return wait;
  }
  const int channel = inputs.FirstMissingFill(next_firing);
  if (channel >= 0 || !started) {
    wait.kind = WaitState::Kind::kStarved;
    if (channel >= 0) {
      wait.register_id = inputs.channel_input(channel).register_id;
      wait.sequence = inputs.FillNeeded(channel, next_firing);
      wait.waiting_on.push_back(inputs.channel_input(channel).producer);
    }
    return wait;
  }
  const int output = outputs.FirstBlockedOutput(next_firing);
  CHECK_GE(output, 0) << actor->name << ": idle with its fills and slots";
  wait.kind = WaitState::Kind::kBlocked;
  wait.register_id = actor->outputs[output].register_id;
  wait.sequence = outputs.oldest_unfreed_fill(output);
  outputs.AppendHolders(output, &wait.waiting_on);
  return wait;
}

ActorProtocol::ActorProtocol(const ActorDescription* description)
    : state_(std::make_unique<State>(description)) {}

ActorProtocol::~ActorProtocol() = default;

void ActorProtocol::Start(Outbox* outbox) {
  CHECK(!state_->started) << state_->actor->name << ": started twice";
  state_->started = true;
  // The most one call sends: a completion releases every input, offers every fill and ends
  // every stream; a Release adds a Ready and an EndOfStream for the in-place writer. Reserving
  // it now keeps a reused outbox from growing (and allocating) on the last firing.
  size_t consumers = 0;
  for (const OutputDescription& output : state_->actor->outputs) {
    consumers += output.consumers.size();
  }
  outbox->messages.reserve(state_->actor->inputs.size() + 2 * consumers + 2);
  state_->TryLaunch(outbox);
  state_->NoteFinished(outbox);
}

Status ActorProtocol::OnReady(ActorId from, const Ready& ready, Outbox* outbox) {
  SOFTWIRE_RETURN_IF_ERROR(state_->inputs.AcceptReady(from, ready));
  state_->TryLaunch(outbox);
  return Status::Ok();
}

Status ActorProtocol::OnRelease(ActorId from, const Release& release, Outbox* outbox) {
  SOFTWIRE_RETURN_IF_ERROR(state_->outputs.AcceptRelease(from, release, outbox));
  state_->TryLaunch(outbox);
  state_->NoteFinished(outbox);
  return Status::Ok();
}

Status ActorProtocol::OnEndOfStream(ActorId from, const EndOfStream& end_of_stream,
                                    Outbox* outbox) {
  SOFTWIRE_RETURN_IF_ERROR(state_->inputs.AcceptEndOfStream(from, end_of_stream));
  state_->NoteFinished(outbox);
  return Status::Ok();
}

Status ActorProtocol::OnFiringDone(int64_t index, Outbox* outbox) {
  State& state = *state_;
  if (!state.running || index != state.next_firing) {
    return InternalError(
        plan::ActorLabel(state.actor->name) + ": completion of firing " + std::to_string(index) +
        ", but " +
        (state.running ? "firing " + std::to_string(state.next_firing) : std::string("no firing")) +
        " is running");
  }
  state.running = false;
  ++state.next_firing;
  state.inputs.ReleaseFinishedFills(index, outbox);
  state.outputs.CompleteFiring(index, outbox);
  if (state.next_firing == state.actor->firings) state.outputs.EndStreams(outbox);
  state.TryLaunch(outbox);
  state.NoteFinished(outbox);
  return Status::Ok();
}

bool ActorProtocol::finished() const {
  return state_->finished;
}

int64_t ActorProtocol::completed_firings() const {
  return state_->next_firing;
}

int ActorProtocol::occupied_slots(int output_index) const {
  return state_->outputs.occupied_slots(output_index);
}

WaitState ActorProtocol::DescribeWait() const {
  return state_->DescribeWait();
}

const ActorDescription& ActorProtocol::description() const {
  return *state_->actor;
}

}  // namespace actors
}  // namespace softwire
