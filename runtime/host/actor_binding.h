// ActorBinding: what never changes about one hosted actor during a run, bound to memory: its
// description, its kernel, the address of every slot it reads or writes, and the
// KernelContexts its firings reuse (only the data pointers and firing numbers change, so a
// firing allocates nothing): a ring of max_in_flight, one per firing in flight, firing i in
// context i % max_in_flight (docs/PROTOCOL.md, "Several firings in flight"). The workspace and
// state are shared by the ring: an actor's firings run on its one queue in launch order.
//
// Bindings are built once per job by BindActors, owned by the job, and outlive the CAF actors
// and every device queue, so a launch still queued when a job fails never points at freed
// memory.
//
// Threading: Bind and a context are used by the actor's handler, or by the thread running
// its launch while the actor waits for the completion; never both at once (a context is bound
// again only after its firing completed). The progress
// fields are atomics read by the job's waiting thread.
#ifndef SOFTWIRE_RUNTIME_HOST_ACTOR_BINDING_H_
#define SOFTWIRE_RUNTIME_HOST_ACTOR_BINDING_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "actors/actor_description.h"
#include "actors/actor_protocol.h"
#include "base/status.h"
#include "data/data_root.h"
#include "proto/plan.pb.h"
#include "runtime/device/device.h"
#include "runtime/device/device_arena.h"
#include "runtime/device/device_queue.h"
#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {

class WireTransport;

// Where the launches of bound actors report their completions, and the flag that cancels the
// launches not yet begun (device_queue.h); the job and the transport its send actors write
// through (send_kernel.h). Borrowed; outlive the bindings.
struct LaunchWiring {
  LaunchListener* listener = nullptr;
  const std::atomic<bool>* stopping = nullptr;
  actors::JobId job = 0;
  const std::atomic<WireTransport*>* wire_transport = nullptr;
};

class ActorBinding {
 public:
  ActorBinding(const proto::ActorDef* def, const actors::ActorDescription* description,
               std::unique_ptr<Kernel> kernel, DeviceQueue* queue, KernelContext context,
               std::vector<std::vector<char*>> input_slots,
               std::vector<std::vector<char*>> output_slots, const LaunchWiring& wiring);

  // Before a run (no firing in flight): its firings continue the numbering of the runs before
  // it, which streamed `pieces_before` pieces (KernelContext::firing and first_piece count on
  // from there), and its progress counters restart at zero.
  void StartRun(int64_t pieces_before);

  // Points firing's context in the ring at the slots `firing` reads and writes and returns its
  // launch, which asks its queue to stamp the kernel's times into `times` (borrowed; null:
  // untraced). The launch stays valid until the firing completed.
  const LaunchRequest& Bind(const actors::Firing& firing, FiringTimes* times);

  const proto::ActorDef& def() const { return *def_; }
  const actors::ActorDescription& description() const { return *description_; }
  DeviceQueue* queue() const { return queue_; }
  // "actor 'fc1'": how errors name it.
  const std::string& display_name() const { return display_name_; }

  // Progress, for the stall watchdog and for steps of plans without outputs. Written by the
  // actor's handler, read by the job's waiting thread.
  std::atomic<int64_t> completed_firings{0};
  // Firings launched (running or queued) and not completed: 0 .. max_in_flight.
  std::atomic<int> firings_in_flight{0};
  std::atomic<bool> finished{false};
  // Launches of this run that their queue deferred (reported later to the LaunchListener).
  std::atomic<int64_t> deferred_launches{0};

 private:
  const proto::ActorDef* def_;
  const actors::ActorDescription* description_;
  std::unique_ptr<Kernel> kernel_;
  DeviceQueue* queue_;
  std::vector<KernelContext> contexts_;           // The ring: firing i uses i % size.
  std::vector<LaunchRequest> requests_;           // Parallel to contexts_.
  std::vector<std::vector<char*>> input_slots_;   // [input][slot] -> address (+ its offset).
  std::vector<std::vector<char*>> output_slots_;  // [output][slot] -> address.
  std::string display_name_;
  int64_t firing_base_ = 0;
  int64_t piece_base_ = 0;
};

// Slot addresses of every register: [register id][slot]. Checks each register's dtype, that
// its tensor fits a slot and that its slots lie inside its device's arena; errors name it.
// Registers of sim devices (no memory) get null addresses. `arenas` by plan device index; the
// registers of a device whose arena is null (another node's) get no slots.
using RegisterSlots = std::vector<std::vector<char*>>;
StatusOr<RegisterSlots> LocateRegisterSlots(
    const proto::Plan& plan, const std::vector<std::unique_ptr<DeviceArena>>& arenas);

// Binds every actor of `plan`: checks its views, workspace and state range against the
// arenas, creates its kernel (Device::CreateKernel), and prepares its context
// (Device::NewKernelContext). An actor of a device with memory that uses a register of a
// device without memory (sim), or of a node not hosted here, is InvalidArgument, except the
// output of a send (its wire register, on the receiving node): a send on a device with memory
// gets a SendKernel writing through `wiring.wire_transport`. Errors name the
// actor or register. Binds the actors `actors` (plan ids); `devices` and `arenas` by plan device
// index (null for devices not hosted here). Result index == actor id, null for the actors not
// bound. Borrowed arguments must outlive the bindings.
StatusOr<std::vector<std::unique_ptr<ActorBinding>>> BindActors(
    const proto::Plan& plan, const std::vector<actors::ActorDescription>& descriptions,
    const std::vector<Device*>& devices, const std::vector<std::unique_ptr<DeviceArena>>& arenas,
    const RegisterSlots& slots, const std::vector<int64_t>& actors, const LaunchWiring& wiring,
    OutputReporter* reporter, const data::DataRoot& data_root);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_ACTOR_BINDING_H_
