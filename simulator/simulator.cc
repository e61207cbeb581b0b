// The engine loop: pop the earliest event, hand it to the protocol of the actor it concerns,
// act on the protocol's outbox. Deliver and Complete are the hot path: they allocate nothing
// after warm-up (the outbox, the lanes and the heap keep their capacity).
#include "simulator/simulator.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "plan/steps.h"

namespace softwire {
namespace simulator {
namespace {

using actors::OutgoingMessage;

std::string TimeText(SimTime time) {
  return std::to_string(time) + " ns";
}

}  // namespace

Simulator::Simulator(const SimulationOptions& options, const proto::Plan& plan)
    : options_(options), job_name_(plan.job_name()) {
  for (const proto::PlanDevice& device : plan.device()) {
    device_names_.push_back(device.node() + "/" + device.name());
  }
  for (const proto::RegisterDef& register_def : plan.register_def()) {
    register_names_.push_back(register_def.name());
  }
}

Simulator::~Simulator() = default;

StatusOr<std::unique_ptr<Simulator>> Simulator::Create(const proto::Plan& planned,
                                                       const SimulationOptions& options) {
  // The steps override runs a copy of the plan with every firing count rescaled.
  std::optional<proto::Plan> resized;
  if (options.steps > 0 && options.steps != planned.schedule().steps()) {
    SOFTWIRE_ASSIGN_OR_RETURN(resized, plan::WithSteps(planned, options.steps));
  }
  const proto::Plan& plan = resized.has_value() ? *resized : planned;
  std::unique_ptr<Simulator> simulator(new Simulator(options, plan));
  SOFTWIRE_ASSIGN_OR_RETURN(simulator->descriptions_, actors::DescribeActors(plan));
  // One firing in flight per actor: the model has no launch latency for several in flight to
  // hide, and its queues hold one waiting launch per actor (README, "Limits").
  for (actors::ActorDescription& description : simulator->descriptions_) {
    description.max_in_flight = 1;
  }
  simulator->pieces_per_step_ = plan.schedule().pieces_per_step();
  simulator->steps_ = plan.schedule().steps();
  SOFTWIRE_ASSIGN_OR_RETURN(simulator->layout_, BuildSimulationLayout(plan, options.latency));
  simulator->output_index_.assign(static_cast<size_t>(plan.register_def_size()), -1);
  for (const proto::ActorDef& actor : plan.actor()) {
    for (int o = 0; o < actor.output_register_size(); ++o) {
      simulator->output_index_[static_cast<size_t>(actor.output_register(o))] = o;
    }
  }
  Simulator& s = *simulator;
  s.protocols_.reserve(s.descriptions_.size());
  for (const actors::ActorDescription& description : s.descriptions_) {
    s.protocols_.push_back(std::make_unique<actors::ActorProtocol>(&description));
  }
  s.events_ = std::make_unique<EventQueue>(s.layout_.lane_latencies);
  s.usage_ = std::make_unique<UsageRecorder>(&s.layout_, s.steps_, s.pieces_per_step_,
                                             plan.device_size(), options.record_busy_intervals);
  s.memory_ = std::make_unique<MemoryTracker>(plan);
  s.actors_.resize(s.descriptions_.size());
  s.queues_.resize(s.layout_.queues.size());
  if (s.layout_.lane_latencies.size() > 1) {
    if (s.layout_.nodes.size() > 65535) return InvalidArgumentError("more than 65535 nodes");
    for (const SimulatedActor& actor : s.layout_.actors) {
      s.node_of_actor_.push_back(static_cast<uint16_t>(actor.node));
    }
  }
  return simulator;
}

StatusOr<SimulationResult> Simulator::Run() {
  CHECK(!ran_) << "Simulator::Run called twice";
  ran_ = true;
  const auto wall_start = std::chrono::steady_clock::now();
  StartActors();
  int64_t events = 0;
  MessageEvent message;
  CompletionEvent completion;
  while (true) {
    const EventQueue::Kind kind = events_->Pop(&message, &completion);
    if (kind == EventQueue::Kind::kNone) break;
    ++events;
    bool ok;
    if (kind == EventQueue::Kind::kMessage) {
      now_ = message.time;
      ok = Deliver(message);
    } else {
      now_ = completion.time;
      ok = Complete(completion.queue);
    }
    if (!ok) return error_.WithContext("at virtual time " + TimeText(now_));
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (finished_ < static_cast<int64_t>(protocols_.size())) return DescribeStall();

  SimulationResult result;
  result.job_name = job_name_;
  result.device_names = device_names_;
  result.actors = static_cast<int64_t>(protocols_.size());
  result.steps = steps_;
  result.pieces_per_step = pieces_per_step_;
  result.stages = layout_.stages;
  usage_->Finish(now_, &result);
  result.memory = memory_->Finish();
  result.firings = firings_;
  result.messages = messages_;
  result.events = events;
  result.max_messages_in_flight = static_cast<int64_t>(events_->max_messages_in_flight());
  result.wall_seconds = wall;
  result.events_per_second = wall > 0 ? static_cast<double>(events) / wall : 0;
  return result;
}

void Simulator::StartActors() {
  for (size_t id = 0; id < protocols_.size(); ++id) {
    outbox_.clear();
    protocols_[id]->Start(&outbox_);
    Dispatch(static_cast<int32_t>(id), Cause{trace::CauseKind::kStart, -1, -1, -1});
  }
}

bool Simulator::Failed(Status status) {
  error_ = std::move(status);
  return false;
}

bool Simulator::Deliver(const MessageEvent& message) {
  actors::ActorProtocol& protocol = *protocols_[static_cast<size_t>(message.to)];
  outbox_.clear();
  Cause cause;
  cause.peer = message.from;
  cause.register_id = static_cast<int32_t>(message.register_id);
  cause.sequence = message.sequence;
  switch (message.type) {
    case OutgoingMessage::Type::kReady: {
      cause.kind = trace::CauseKind::kInput;
      Status status = protocol.OnReady(
          message.from, actors::Ready{message.register_id, message.slot, message.sequence},
          &outbox_);
      if (!status.ok()) return Failed(std::move(status));
      break;
    }
    case OutgoingMessage::Type::kRelease: {
      cause.kind = trace::CauseKind::kSlot;
      Status status = protocol.OnRelease(
          message.from, actors::Release{message.register_id, message.slot, message.sequence},
          &outbox_);
      if (!status.ok()) return Failed(std::move(status));
      memory_->Set(
          message.register_id,
          protocol.occupied_slots(output_index_[static_cast<size_t>(message.register_id)]));
      break;
    }
    case OutgoingMessage::Type::kEndOfStream: {
      Status status =
          protocol.OnEndOfStream(message.from, actors::EndOfStream{message.register_id}, &outbox_);
      if (!status.ok()) return Failed(std::move(status));
      break;
    }
  }
  Dispatch(message.to, cause);
  return true;
}

bool Simulator::Complete(int32_t queue_index) {
  QueueState& queue = queues_[static_cast<size_t>(queue_index)];
  const int32_t actor = queue.running;
  const ActorState& state = actors_[static_cast<size_t>(actor)];
  const int64_t firing = state.firing;
  const SimulatedActor& facts = layout_.actors[static_cast<size_t>(actor)];
  usage_->FiringEnded(actor, firing * facts.period, queue.start, now_);
  if (options_.trace_writer != nullptr) RecordTrace(actor, queue.start);
  queue.running = -1;
  ++firings_;

  actors::ActorProtocol& protocol = *protocols_[static_cast<size_t>(actor)];
  outbox_.clear();
  Status status = protocol.OnFiringDone(firing, &outbox_);
  if (!status.ok()) return Failed(std::move(status));
  if (facts.frees_on_completion) {
    // A register nobody reads is freed as soon as its fill completes.
    const actors::ActorDescription& description = descriptions_[static_cast<size_t>(actor)];
    for (size_t o = 0; o < description.outputs.size(); ++o) {
      if (description.outputs[o].consumers.empty()) {
        memory_->Set(description.outputs[o].register_id,
                     protocol.occupied_slots(static_cast<int>(o)));
      }
    }
  }
  Dispatch(actor, Cause{trace::CauseKind::kPreviousFiring, actor, -1, firing});
  // The queue is free: the firing that waited longest runs next (the actor's own next firing,
  // if Dispatch just queued it, waits behind those already waiting).
  if (queue.running < 0 && queue.waiting_head >= 0) {
    const int32_t next = queue.waiting_head;
    queue.waiting_head = actors_[static_cast<size_t>(next)].next_waiting;
    if (queue.waiting_head < 0) queue.waiting_tail = -1;
    StartKernel(queue_index, next);
  }
  return true;
}

void Simulator::Dispatch(int32_t actor, const Cause& cause) {
  if (!outbox_.messages.empty()) {
    const bool one_lane = node_of_actor_.empty();
    const int32_t from_node = one_lane ? 0 : node_of_actor_[static_cast<size_t>(actor)];
    MessageEvent event;
    event.from = actor;
    for (const OutgoingMessage& message : outbox_.messages) {
      event.to = static_cast<int32_t>(message.to);
      event.type = message.type;
      event.register_id = message.register_id;  // The flat form: no switch on the type.
      event.slot = message.slot;
      event.sequence = message.sequence;
      const int lane =
          one_lane ? 0 : layout_.lane(from_node, node_of_actor_[static_cast<size_t>(event.to)]);
      events_->PushMessage(lane, now_, event);
    }
    messages_ += static_cast<int64_t>(outbox_.messages.size());
  }
  if (outbox_.launch) {
    const actors::Firing& launch = *outbox_.launch;
    const actors::ActorProtocol& protocol = *protocols_[static_cast<size_t>(actor)];
    for (size_t o = 0; o < launch.outputs.size(); ++o) {
      if (launch.output_fill_begins[o]) {
        memory_->Set(launch.outputs[o].register_id, protocol.occupied_slots(static_cast<int>(o)));
      }
    }
    Enqueue(actor, launch.index, cause);
  }
  if (outbox_.finished) ++finished_;
}

void Simulator::Enqueue(int32_t actor, int64_t firing, const Cause& cause) {
  ActorState& state = actors_[static_cast<size_t>(actor)];
  state.firing = firing;
  state.launched = now_;
  state.cause = cause;
  state.next_waiting = -1;
  const int32_t queue_index = layout_.actors[static_cast<size_t>(actor)].queue;
  QueueState& queue = queues_[static_cast<size_t>(queue_index)];
  if (queue.running < 0 && queue.waiting_head < 0) {
    StartKernel(queue_index, actor);
    return;
  }
  if (queue.waiting_tail >= 0) {
    actors_[static_cast<size_t>(queue.waiting_tail)].next_waiting = actor;
  } else {
    queue.waiting_head = actor;
  }
  queue.waiting_tail = actor;
}

void Simulator::StartKernel(int32_t queue_index, int32_t actor) {
  QueueState& queue = queues_[static_cast<size_t>(queue_index)];
  queue.running = actor;
  queue.start = now_;
  events_->PushCompletion(now_ + layout_.actors[static_cast<size_t>(actor)].duration_ns,
                          queue_index);
}

void Simulator::RecordTrace(int32_t actor, SimTime start) {
  const ActorState& state = actors_[static_cast<size_t>(actor)];
  const int64_t first_piece = state.firing * layout_.actors[static_cast<size_t>(actor)].period;
  if (!options_.trace_steps.Contains(first_piece / std::max<int64_t>(1, pieces_per_step_))) {
    return;
  }
  options_.trace_writer->Append(trace::FiringEvent(actor, state.firing, state.launched, start, now_,
                                                   state.cause.kind, state.cause.peer,
                                                   state.cause.register_id, state.cause.sequence));
}

Status Simulator::DescribeStall() const {
  constexpr int kNamed = 8;
  const int64_t unfinished = static_cast<int64_t>(protocols_.size()) - finished_;
  std::string text = "the simulation ran out of events at virtual time " + TimeText(now_) +
                     " with " + std::to_string(unfinished) + " of " +
                     std::to_string(protocols_.size()) + " actors unfinished (a deadlock):";
  int named = 0;
  for (size_t id = 0; id < protocols_.size() && named < kNamed; ++id) {
    const actors::ActorProtocol& protocol = *protocols_[id];
    if (protocol.finished()) continue;
    ++named;
    const actors::WaitState wait = protocol.DescribeWait();
    text += " '" + descriptions_[id].name + "' (" + actors::WaitKindName(wait.kind) + ", firing " +
            std::to_string(wait.next_firing);
    if (wait.register_id >= 0) {
      text += ", register '" + register_names_[static_cast<size_t>(wait.register_id)] + "' fill " +
              std::to_string(wait.sequence);
    }
    for (size_t i = 0; i < wait.waiting_on.size(); ++i) {
      text += (i == 0 ? ", on '" : "', '") +
              descriptions_[static_cast<size_t>(wait.waiting_on[i])].name;
      if (i + 1 == wait.waiting_on.size()) text += "'";
    }
    text += ");";
  }
  if (unfinished > named) text += " ...";
  return FailedPreconditionError(text);
}

StatusOr<SimulationResult> Simulate(const proto::Plan& plan, const SimulationOptions& options) {
  SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<Simulator> simulator, Simulator::Create(plan, options));
  return simulator->Run();
}

}  // namespace simulator
}  // namespace softwire
