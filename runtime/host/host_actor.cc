#include "runtime/host/host_actor.h"

#include <caf/all.hpp>
#include <exception>

#include "runtime/host/host_messages.h"

namespace softwire {
namespace runtime {
namespace {

// Whether the protocol may send a Ready or Release with a launch (a marked edge).
bool HasStreamOrderedEdges(const actors::ActorDescription& description) {
  for (const actors::InputDescription& input : description.inputs) {
    if (input.release_at_launch) return true;
  }
  for (const actors::OutputDescription& output : description.outputs) {
    for (const actors::ConsumerDescription& consumer : output.consumers) {
      if (consumer.ready_at_launch) return true;
    }
  }
  return false;
}

}  // namespace

HostActor::HostActor(caf::actor_config& config, ActorBinding* binding, const PeerRouter* router,
                     JobMonitor* monitor, ActorTracer* tracer, CheckpointRecorder* checkpoints)
    : caf::event_based_actor(config),
      binding_(binding),
      router_(router),
      monitor_(monitor),
      tracer_(tracer),
      checkpoints_(checkpoints),
      id_(binding->def().id()),
      protocol_(&binding->description()),
      launch_before_messages_(HasStreamOrderedEdges(binding->description())) {
  // CAF would print unexpected messages and uncaught exceptions to stdout; they are errors of
  // this job instead.
  set_default_handler([this](caf::scheduled_actor*, caf::message_view& view) {
    Fail(InternalError("unexpected message " + caf::to_string(view.copy_content_to_message())));
    return caf::result<caf::message>(caf::sec::unexpected_message);
  });
  set_exception_handler([this](caf::scheduled_actor*, std::exception_ptr& exception) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(exception);
    } catch (const std::exception& caught) {
      what = caught.what();
    } catch (...) {
    }
    Fail(InternalError("exception: " + what));
    return caf::error(caf::exit_reason::unhandled_exception);
  });
}

HostActor::~HostActor() = default;

const char* HostActor::name() const {
  return binding_->def().name().c_str();
}

caf::behavior HostActor::make_behavior() {
  // The protocol's messages first: CAF tries handlers in order.
  return {
      [this](const actors::ProtocolMessage& message) {
        EnsureStarted();
        if (stopped_) return;
        switch (message.type) {
          case actors::MessageType::kReady:
            Drive(protocol_.OnReady(message.from, message.ready(), &outbox_), &message);
            break;
          case actors::MessageType::kRelease:
            Drive(protocol_.OnRelease(message.from, message.release(), &outbox_), &message);
            break;
          default:
            Drive(protocol_.OnEndOfStream(message.from, message.end_of_stream(), &outbox_));
            break;
        }
      },
      [this](const LaunchDone& done) {
        if (stopped_) return;
        Drive(Complete(done.firing, Status(static_cast<StatusCode>(done.code), done.message)));
      },
      [this](start_atom) { EnsureStarted(); },
      [this](describe_wait_atom, const caf::actor& reply_to) {
        actors::WaitState wait = protocol_.DescribeWait();
        WaitReport report;
        report.actor = id_;
        report.kind = static_cast<int32_t>(wait.kind);
        report.next_firing = wait.next_firing;
        report.register_id = wait.register_id;
        report.sequence = wait.sequence;
        report.waiting_on.assign(wait.waiting_on.begin(), wait.waiting_on.end());
        report.completed_firings = protocol_.completed_firings();
        caf::anon_send(reply_to, std::move(report));
      },
  };
}

void HostActor::EnsureStarted() {
  if (started_) return;
  started_ = true;
  outbox_.clear();
  protocol_.Start(&outbox_);
  Drive(Status::Ok());
}

// Launches every firing the protocol allows: one at a time up to max_in_flight (docs/PROTOCOL.md,
// "Several firings in flight"). After a deferred launch the protocol may launch another
// (LaunchAnother); after an inline one, the completion does.
void HostActor::Drive(Status status, const actors::ProtocolMessage* message) {
  for (;;) {
    if (!status.ok()) {
      Fail(std::move(status));
      return;
    }
    // A Ready or Release sent at a launch may let another actor enqueue work behind it on the
    // same stream: the launch goes first (actors/stream_ordered_edges.h, the host's duties).
    if (launch_before_messages_ && outbox_.launch) {
      std::swap(after_launch_, outbox_.messages);
    } else {
      SendOutbox();
    }
    if (holding_queue_) {
      holding_queue_ = false;
      binding_->queue()->ReleaseInline();
    }
    if (outbox_.finished) {
      outbox_.clear();
      stopped_ = true;
      binding_->finished.store(true, std::memory_order_relaxed);
      monitor_->ActorFinished();
      quit();
      return;
    }
    if (!outbox_.launch) {
      outbox_.clear();
      return;
    }
    FiringTimes* times = nullptr;  // Set for a firing the trace records.
    if (tracer_ != nullptr) times = tracer_->BeforeLaunch(outbox_.launch->index, message);
    const LaunchRequest& request = binding_->Bind(*outbox_.launch, times);
    outbox_.clear();
    Status kernel_status;
    // Only this actor writes its counters: plain increments, published for the watchdog.
    binding_->firings_in_flight.store(
        binding_->firings_in_flight.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    const DeviceQueue::Outcome outcome = binding_->queue()->Launch(request, &kernel_status);
    if (!after_launch_.empty()) Send(&after_launch_);
    if (outcome == DeviceQueue::Outcome::kDeferred) {
      // Published for the run's end.
      binding_->deferred_launches.store(
          binding_->deferred_launches.load(std::memory_order_relaxed) + 1,
          std::memory_order_release);
      if (times != nullptr) tracer_->LaunchDeferred();
      protocol_.LaunchAnother(&outbox_);  // Nothing at max_in_flight 1.
      if (!outbox_.launch) return;        // LaunchDone follows.
      continue;                           // Caused by the same message as the launch before it.
    }
    if (times != nullptr) tracer_->LaunchRanInline();
    holding_queue_ = true;
    status = Complete(request.firing, kernel_status);
    message = nullptr;  // What it launches next, the completion caused.
  }
}

Status HostActor::Complete(int64_t firing, const Status& kernel_status) {
  binding_->firings_in_flight.store(binding_->firings_in_flight.load(std::memory_order_relaxed) - 1,
                                    std::memory_order_relaxed);
  if (!kernel_status.ok()) {
    return kernel_status.WithContext("firing " + std::to_string(firing) + " of kernel '" +
                                     binding_->def().kernel().op_type() + "'");
  }
  // Only this actor writes its counter: a plain increment, published for the watchdog.
  binding_->completed_firings.store(binding_->completed_firings.load(std::memory_order_relaxed) + 1,
                                    std::memory_order_relaxed);
  if (tracer_ != nullptr) tracer_->FiringCompleted(firing);
  // Before the protocol releases the variable this update actor holds.
  if (checkpoints_ != nullptr) checkpoints_->UpdateCompleted(id_, firing);
  return protocol_.OnFiringDone(firing, &outbox_);
}

void HostActor::SendOutbox() {
  Send(&outbox_.messages);
}

void HostActor::Send(std::vector<actors::ProtocolMessage>* messages) {
  const actors::JobId job = router_->job();
  for (actors::ProtocolMessage& message : *messages) {
    message.job = job;
    message.from = id_;
    router_->Route(message, context());
  }
  messages->clear();
}

void HostActor::Fail(Status status) {
  if (stopped_) return;
  stopped_ = true;
  // The first failure raises the stop flag before we let go of the queue, so launches queued
  // behind ours are cancelled rather than run.
  monitor_->Fail(status.WithContext(binding_->display_name() + " (" +
                                    actors::ActorKindName(binding_->description().kind) + ")"));
  if (holding_queue_) {
    holding_queue_ = false;
    binding_->queue()->ReleaseInline();
  }
  quit(caf::exit_reason::user_shutdown);
}

}  // namespace runtime
}  // namespace softwire
