// HostActor: the CAF actor that hosts one plan actor. It feeds the pure protocol state
// machine (actors/actor_protocol.h) the messages it receives and the completions of its
// kernels, sends what the protocol asks, and launches firings on its device queue.
//
// A firing whose queue is idle runs inline, inside the handler that made it possible, and the
// protocol continues synchronously: in the common case a piece crosses an actor with no
// thread hand-off and no message besides the protocol's own Ready and Release. Errors (a
// protocol violation, a kernel failure, an unexpected message, an exception) fail the job
// through the JobMonitor with a Status naming the actor; the actor then stops.
//
// Messages handled: actors::ProtocolMessage (Ready, Release or EndOfStream from a peer);
// LaunchDone; start_atom; (describe_wait_atom, caf::actor reply_to) -> WaitReport to reply_to.
// Tracing: with a tracer (a traced job), the actor records each firing and what let it launch
// (actor_tracer.h); without one, each hook is one branch on a null pointer.
// Threading: CAF runs one handler of an actor at a time, on any worker thread.
// Messages to peers go through the run's PeerRouter (peer_router.h), stamped with the job id.
// Ownership: the binding (from the hosted plan), router, monitor and tracer (from the
// Execution) are borrowed and outlive the actor.
#ifndef SOFTWIRE_RUNTIME_HOST_HOST_ACTOR_H_
#define SOFTWIRE_RUNTIME_HOST_HOST_ACTOR_H_

#include <caf/event_based_actor.hpp>

#include "actors/actor_protocol.h"
#include "runtime/host/actor_binding.h"
#include "runtime/host/actor_tracer.h"
#include "runtime/host/checkpoint_recorder.h"
#include "runtime/host/host_messages.h"
#include "runtime/host/job_monitor.h"
#include "runtime/host/peer_router.h"

namespace softwire {
namespace runtime {

class HostActor final : public caf::event_based_actor {
 public:
  // `tracer` is null when the job is not traced; `checkpoints` when the run takes no
  // checkpoints or this actor copies nothing into them.
  HostActor(caf::actor_config& config, ActorBinding* binding, const PeerRouter* router,
            JobMonitor* monitor, ActorTracer* tracer, CheckpointRecorder* checkpoints);
  ~HostActor() override;

  caf::behavior make_behavior() override;
  const char* name() const override;

 private:
  // Runs the protocol's Start once, before the first message is handled.
  void EnsureStarted();
  // Acts on the outcome of one protocol call: sends its messages, launches its firing, and
  // keeps going while launches complete inline. `message` is the message the call handled
  // (null for a start or a completion): if the call launches a firing, that message is what
  // let it launch (traces record it as the firing's cause).
  void Drive(Status status, const actors::ProtocolMessage* message = nullptr);
  // The protocol's answer to a completed firing, or the kernel's error with context.
  Status Complete(int64_t firing, const Status& kernel_status);
  void SendOutbox();
  // Sends `messages` (stamped with this actor and the job) and empties it.
  void Send(std::vector<actors::ProtocolMessage>* messages);
  void Fail(Status status);

  ActorBinding* const binding_;
  const PeerRouter* const router_;
  JobMonitor* const monitor_;
  ActorTracer* const tracer_;
  CheckpointRecorder* const checkpoints_;
  const actors::ActorId id_;
  actors::ActorProtocol protocol_;
  actors::Outbox outbox_;
  // The actor has stream-ordered edges (HostedPlan::MarkStreamOrderedEdges): a launch is
  // enqueued before the messages that came with it are sent, which wait here meanwhile.
  const bool launch_before_messages_;
  std::vector<actors::ProtocolMessage> after_launch_;
  bool started_ = false;
  bool holding_queue_ = false;  // An inline launch left us holding the queue.
  bool stopped_ = false;        // Finished or failed: later messages are ignored.
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_HOST_ACTOR_H_
