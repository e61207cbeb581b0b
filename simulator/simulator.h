// Simulator: runs a plan's actor protocol in virtual time on a discrete-event loop, driving
// the very ActorProtocol state machines (actors/) the CAF runtime drives.
//
//   SimulationOptions options;                       // simulation_options.h
//   StatusOr<SimulationResult> result = Simulate(plan, options);
//   std::cout << FormatSimulationReport(*result);    // simulation_report.h
//
// The model (simulator/README.md says more, and what it leaves out):
//   - one ActorProtocol per plan actor, all started at time 0 in id order;
//   - every device queue (ActorDef.device, ActorDef.queue) runs one kernel at a time; a kernel
//     takes ActorDef.estimated_seconds. Firings that want a busy queue wait in FIFO order of
//     the time the protocol let them launch, as behind the runtime's strand: when a kernel
//     ends, its actor's messages go out, then the queue starts the firing that waited longest,
//     and the actor's own next firing queues behind those already waiting;
//   - a message reaches its receiver a fixed latency after it was sent (LatencyModel); messages
//     between one pair of actors arrive in the order they were sent;
//   - events at the same virtual time happen in the order they were scheduled, so a run is a
//     pure function of the plan and the options.
//
// Failure: InvalidArgument when the plan breaks the protocol's invariants (DescribeActors), an
// estimate is negative, or the steps override does not fit the plan's periods; a protocol
// violation while running is returned with the virtual time; FailedPrecondition when the run
// stops with actors unfinished (a deadlock), naming what the first of them wait for.
//
// Threading: a Simulator is used by one thread. Run may be called once.
#ifndef SOFTWIRE_SIMULATOR_SIMULATOR_H_
#define SOFTWIRE_SIMULATOR_SIMULATOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "actors/actor_description.h"
#include "actors/actor_protocol.h"
#include "base/status.h"
#include "proto/plan.pb.h"
#include "simulator/event_queue.h"
#include "simulator/memory_tracker.h"
#include "simulator/simulation_layout.h"
#include "simulator/simulation_options.h"
#include "simulator/simulation_result.h"
#include "simulator/usage_recorder.h"
#include "trace/trace_event.h"

namespace softwire {
namespace simulator {

class Simulator {
 public:
  // Checks and describes the plan and sets everything up; copies what it needs, so `plan`
  // need not outlive the simulator. The options' trace writer is borrowed.
  static StatusOr<std::unique_ptr<Simulator>> Create(const proto::Plan& plan,
                                                     const SimulationOptions& options);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Runs the plan to its end. Its wall time (what events_per_second divides by) excludes
  // Create's.
  StatusOr<SimulationResult> Run();

  // The steps the run covers (the override, else the plan's).
  int64_t steps() const { return steps_; }

 private:
  // What let a firing launch (trace::CauseKind and its fields).
  struct Cause {
    trace::CauseKind kind = trace::CauseKind::kNone;
    int32_t peer = -1;
    int32_t register_id = -1;
    int64_t sequence = -1;
  };
  // Live state of one actor beyond its protocol.
  struct ActorState {
    int64_t firing = 0;         // The firing launched last (waiting for its queue, or running).
    SimTime launched = 0;       // When the protocol launched it.
    int32_t next_waiting = -1;  // The next actor waiting for the same queue, or -1.
    Cause cause;
  };
  // Live state of one device queue.
  struct QueueState {
    int32_t running = -1;       // Actor whose kernel runs, or -1.
    SimTime start = 0;          // When it started.
    int32_t waiting_head = -1;  // FIFO of actors waiting, linked through next_waiting.
    int32_t waiting_tail = -1;
  };

  Simulator(const SimulationOptions& options, const proto::Plan& plan);

  void StartActors();
  // Deliver and Complete return false after a protocol error, which they leave in error_
  // (a Status per event would cost a string's construction and destruction on the hot path).
  bool Deliver(const MessageEvent& message);
  bool Complete(int32_t queue);
  bool Failed(Status status);
  // Acts on the outbox of `actor`'s last protocol call: sends its messages, queues its launch.
  void Dispatch(int32_t actor, const Cause& cause);
  void Enqueue(int32_t actor, int64_t firing, const Cause& cause);
  void StartKernel(int32_t queue, int32_t actor);
  void RecordTrace(int32_t actor, SimTime start);
  Status DescribeStall() const;

  const SimulationOptions options_;
  std::string job_name_;
  std::vector<std::string> device_names_;
  std::vector<std::string> register_names_;  // For the stall report.
  int64_t steps_ = 1;
  int64_t pieces_per_step_ = 1;
  std::vector<actors::ActorDescription> descriptions_;
  std::vector<std::unique_ptr<actors::ActorProtocol>> protocols_;
  SimulationLayout layout_;
  std::vector<int32_t> output_index_;  // Per register: its index among its producer's outputs.
  // Per actor: its node (layout_.actors[i].node), packed so the hot path reads 2 bytes per
  // message rather than a 48-byte record; empty when every actor is on one node.
  std::vector<uint16_t> node_of_actor_;
  std::unique_ptr<EventQueue> events_;
  std::unique_ptr<UsageRecorder> usage_;
  std::unique_ptr<MemoryTracker> memory_;
  std::vector<ActorState> actors_;
  std::vector<QueueState> queues_;
  actors::Outbox outbox_;
  SimTime now_ = 0;
  int64_t finished_ = 0;
  int64_t firings_ = 0;
  int64_t messages_ = 0;
  Status error_;
  bool ran_ = false;
};

// Create, then Run.
StatusOr<SimulationResult> Simulate(const proto::Plan& plan, const SimulationOptions& options);

}  // namespace simulator
}  // namespace softwire

#endif  // SOFTWIRE_SIMULATOR_SIMULATOR_H_
