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
  explicit State(const ActorDescription* actor)
      : actor(actor),
        inputs(actor),
        outputs(actor),
        completion_arrived(static_cast<size_t>(actor->max_in_flight), false) {}

  // Launches the next firing when it may (docs/PROTOCOL.md, "Launch" and "Several firings in
  // flight"): at most one per call, so that a host takes each launch before the next.
  void TryLaunch(Outbox* outbox) {
    if (!started || launched == actor->firings) return;
    if (launched - completed >= actor->max_in_flight) return;
    if (inputs.FirstMissingFill(launched, /*oldest=*/launched == completed) >= 0) return;
    if (outputs.FirstBlockedOutput(launched) >= 0) return;
    Firing& firing = outbox->BeginLaunch();
    firing.index = launched;
    firing.first_piece = launched * actor->period;
    inputs.BindInputs(launched, &firing.inputs);
    outputs.BeginFiring(launched, &firing.outputs, &firing.output_fill_begins);
    // Stream-ordered edges: the messages the launch itself allows (the host enqueues the
    // kernel before it sends them), Releases of inputs, then Readies of outputs.
    inputs.ReleaseAtLaunch(launched, outbox);
    outputs.OfferAtLaunch(launched, outbox);
    ++launched;
  }

  // The completion of the oldest firing in flight takes effect: Releases, Readies, and after
  // the last firing EndOfStream.
  void CompleteOldest(Outbox* outbox) {
    const int64_t index = completed++;
    inputs.ReleaseFinishedFills(index, outbox);
    outputs.CompleteFiring(index, outbox);
    if (completed == actor->firings) outputs.EndStreams(outbox);
  }

  // Reports the transition to finished exactly once.
  void NoteFinished(Outbox* outbox) {
    if (finished || !IsFinished()) return;
    finished = true;
    outbox->finished = true;
  }

  bool IsFinished() const {
    return completed == actor->firings && outputs.all_slots_back() && inputs.all_ended();
  }

  int64_t in_flight() const { return launched - completed; }
  // Per firing in flight, at index % max_in_flight: its completion arrived ahead of an
  // earlier firing's and waits to take effect.
  std::vector<bool>::reference arrived(int64_t index) {
    return completion_arrived[static_cast<size_t>(index % actor->max_in_flight)];
  }

  WaitState DescribeWait() const;

  // Why a completion of firing `index` is refused: "no firing is running", "firing 3 is
  // running", "firings 3 to 5 are in flight" (and "its completion already came").
  std::string RefuseCompletion(int64_t index) {
    std::string text = plan::ActorLabel(actor->name) + ": completion of firing " +
                       std::to_string(index) + ", but ";
    const int64_t count = in_flight();
    if (count == 0) return text + "no firing is running";
    if (count == 1) return text + "firing " + std::to_string(completed) + " is running";
    text += "firings " + std::to_string(completed) + " to " + std::to_string(launched - 1) +
            " are in flight";
    if (index >= completed && index < launched) text += " and its completion already came";
    return text;
  }

  const ActorDescription* actor;
  InputSide inputs;
  OutputSide outputs;
  int64_t launched = 0;   // Firings launched: the next to launch.
  int64_t completed = 0;  // Firings whose completion took effect: the oldest in flight.
  std::vector<bool> completion_arrived;
  bool started = false;
  bool finished = false;
};

WaitState ActorProtocol::State::DescribeWait() const {
  WaitState wait;
  wait.next_firing = launched;
  if (finished) {
    wait.kind = WaitState::Kind::kFinished;
    return wait;
  }
  if (in_flight() > 0) {
    wait.kind = WaitState::Kind::kRunning;
    wait.next_firing = completed;  // The oldest in flight.
    return wait;
  }
  if (launched == actor->firings) {
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
  const int channel = inputs.FirstMissingFill(launched);
  if (channel >= 0 || !started) {
    wait.kind = WaitState::Kind::kStarved;
    if (channel >= 0) {
      wait.register_id = inputs.channel_input(channel).register_id;
      wait.sequence = inputs.FillNeeded(channel, launched);
      wait.waiting_on.push_back(inputs.channel_input(channel).producer);
    }
    return wait;
  }
  const int output = outputs.FirstBlockedOutput(launched);
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
  // With k in flight, completions that arrived early take effect together: k times the
  // Releases and Readies (k = 1: the same count); the launch that follows may send its
  // stream-ordered Releases and Readies too.
  const size_t in_flight = static_cast<size_t>(state_->actor->max_in_flight);
  outbox->messages.reserve((in_flight + 1) * (state_->actor->inputs.size() + consumers) +
                           consumers + 2);
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

void ActorProtocol::LaunchAnother(Outbox* outbox) {
  CHECK(!outbox->launch) << state_->actor->name << ": LaunchAnother before the host took a launch";
  state_->TryLaunch(outbox);
}

Status ActorProtocol::OnFiringDone(int64_t index, Outbox* outbox) {
  State& state = *state_;
  if (index < state.completed || index >= state.launched || state.arrived(index)) {
    return InternalError(state.RefuseCompletion(index));
  }
  state.arrived(index) = true;
  // Completions take effect in launch order: an early one waits for the firings before it.
  while (state.completed < state.launched && state.arrived(state.completed)) {
    state.arrived(state.completed) = false;
    state.CompleteOldest(outbox);
  }
  state.TryLaunch(outbox);
  state.NoteFinished(outbox);
  return Status::Ok();
}

bool ActorProtocol::finished() const {
  return state_->finished;
}

int64_t ActorProtocol::completed_firings() const {
  return state_->completed;
}

int64_t ActorProtocol::launched_firings() const {
  return state_->launched;
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
