// HostedPlan: one node's share of a plan, loaded once on a NodeRuntime and run any number of
// times (an Execution per run). What it holds never changes during a run: the actors' fixed
// descriptions, their bindings (kernels, slot addresses, kernel contexts), and one arena per
// device it uses. The arenas hold the variables and the optimizer state, so a run starts from
// where the previous one ended: a trained model runs again (more steps, the next batches)
// without reloading. What changes per run lives in the Execution.
//
//   StatusOr<std::unique_ptr<HostedPlan>> hosted = HostedPlan::Load(runtime, plan, "node1");
//   (*hosted)->Bind({node0_hosted});   // the other nodes' hosted plans in this process
//
// A share of a plan (node not empty) holds the actors of that node's devices
// (plan::PartitionPlan); messages to the other actors go through the execution's PeerRouter. An
// actor that reads a register of another node reads it where that node's hosted plan keeps it
// (one address space; a data plane replaces this across processes), hence Bind's `peers`.
//
// Runs number their firings on from the previous run (KernelContext::firing and first_piece
// continue), so a kernel that initialises on its first firing (a variable) does it once, and an
// optimizer's step count goes on. A run that failed leaves the hosted plan broken: later runs
// fail with FailedPrecondition.
//
// Threading: Load, Bind and the destructor on one thread; one Execution at a time.
// Ownership: borrows the runtime and the plan, which outlive it. Holds its devices (claimed for
// its job, NodeRuntime::Claim) until it is destroyed.
#ifndef SOFTWIRE_RUNTIME_HOST_HOSTED_PLAN_H_
#define SOFTWIRE_RUNTIME_HOST_HOSTED_PLAN_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/actor_description.h"
#include "actors/messages.h"
#include "base/status.h"
#include "data/data_root.h"
#include "proto/plan.pb.h"
#include "runtime/device/device.h"
#include "runtime/device/device_arena.h"
#include "runtime/host/actor_binding.h"
#include "runtime/host/actor_directory.h"
#include "runtime/host/wire_transport.h"
#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {

class NodeRuntime;

class HostedPlan {
 public:
  // Checks `plan` (actors::DescribeActors), claims the devices of `node` (every device of the
  // plan when empty) on `runtime` for job `job` (0: a new job id), allocates their arenas and
  // locates the registers in them. Fails naming the device when the runtime does not host it or
  // another job holds it. The plan's data paths resolve under `data_root` (data/data_root.h)
  // when Bind creates the kernels; with none, a plan whose sources or initializers name files
  // by relative path fails to bind, naming the source or variable.
  static StatusOr<std::unique_ptr<HostedPlan>> Load(NodeRuntime* runtime, const proto::Plan& plan,
                                                    const std::string& node, actors::JobId job = 0,
                                                    data::DataRoot data_root = {});
  // Creates the kernels and binds the actors. `peers`: the hosted plans of the plan's other
  // nodes in this process, where registers of their devices lie. Call once, before any run.
  Status Bind(const std::vector<const HostedPlan*>& peers);
  ~HostedPlan();
  HostedPlan(const HostedPlan&) = delete;
  HostedPlan& operator=(const HostedPlan&) = delete;

  actors::JobId job() const { return job_; }
  const proto::Plan& plan() const { return plan_; }
  const std::string& node() const { return node_; }
  const data::DataRoot& data_root() const { return data_root_; }
  // Plan ids of the actors hosted here, ascending.
  const std::vector<int64_t>& actors() const { return actors_; }
  // Plan ids of every actor hosted by `node` (another node of the plan).
  StatusOr<std::vector<int64_t>> ActorsOf(const std::string& node) const;
  // By plan device index; null for devices of other nodes.
  const std::vector<Device*>& devices() const { return devices_; }
  const std::vector<std::unique_ptr<DeviceArena>>& arenas() const { return arenas_; }
  // Slot addresses of every register ([register id][slot]); empty for registers of other nodes.
  const RegisterSlots& register_slots() const { return slots_; }

  // For Execution. Bindings by actor id (null for actors of other nodes).
  const std::vector<std::unique_ptr<ActorBinding>>& bindings() const { return bindings_; }
  ActorDirectory* directory() { return &directory_; }
  std::atomic<bool>* stopping() { return &stopping_; }
  // What the send actors write their bytes through: by default the in-process transport (into
  // the peers' slots that Bind was given); a data plane sets its own for a run across processes
  // (before the run starts) and resets it with null (after it ended).
  void SetWireTransport(WireTransport* transport);
  // Where sink kernels report during the current run; Execution sets it before its start.
  void SetOutputTarget(OutputReporter* target);
  // Pieces that every completed run together streamed: where the next run's numbering starts.
  int64_t pieces_before() const { return pieces_before_; }
  // Before the first run: number the firings on as if `steps` steps had run (a run resumed from
  // a checkpoint, training_state.h), so sources read the next batches and optimizers count on.
  // FailedPrecondition after a run.
  Status ContinueFrom(int64_t steps);
  // Steps that the runs before the next one streamed (ContinueFrom's included).
  int64_t steps_before() const;
  // Called by an Execution at its end: a complete run moves the numbering on, a failed one
  // breaks the hosted plan.
  void RunEnded(bool completed);
  bool broken() const { return broken_; }
  // Before a run's actors start: marks the edges between hosted actors whose kernels run on one
  // device queue that says it runs in launch order (a CUDA stream), so their Readies and
  // Releases go at launch (actors::MarkStreamOrderedEdges, docs/PROTOCOL.md "Stream-ordered
  // edges"); every other edge waits for completions. `completion_hook(id)`: actor `id` runs
  // host code at its completions that must come before its Releases (a checkpointed update),
  // so it keeps completion order. The HostActor of a marked actor enqueues each launch before
  // it sends the messages that came with it.
  Status MarkStreamOrderedEdges(const std::function<bool(int64_t)>& completion_hook);
  int64_t runs() const { return runs_; }

 private:
  class OutputRelay;
  HostedPlan(NodeRuntime* runtime, const proto::Plan& plan, std::string node, actors::JobId job,
             data::DataRoot data_root);

  NodeRuntime* const runtime_;
  const proto::Plan& plan_;
  const std::string node_;
  const actors::JobId job_;
  const data::DataRoot data_root_;
  std::vector<actors::ActorDescription> descriptions_;
  std::vector<int64_t> actors_;
  std::vector<Device*> devices_;
  std::vector<std::unique_ptr<DeviceArena>> arenas_;
  RegisterSlots slots_;
  std::unique_ptr<InProcessWireTransport> in_process_transport_;
  std::atomic<WireTransport*> wire_transport_{nullptr};
  ActorDirectory directory_;
  std::atomic<bool> stopping_{false};
  std::unique_ptr<OutputRelay> outputs_;
  std::vector<std::unique_ptr<ActorBinding>> bindings_;
  int64_t pieces_before_ = 0;
  int64_t runs_ = 0;
  bool bound_ = false;
  bool broken_ = false;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_HOSTED_PLAN_H_
