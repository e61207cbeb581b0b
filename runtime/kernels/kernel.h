// Kernel: what an actor runs when it fires, on one device.
//
// A kernel object is created once per actor, from the actor's definition in the plan, before
// the first firing (KernelRegistry::Create). Creation parses attributes and checks shapes, so
// Run does no string work. Run is called once per firing with views into the register slots
// the firing reads and writes.
//
// Threading: Run is never called concurrently for one kernel object (an actor fires one
// firing at a time). Different kernel objects run concurrently on different threads.
// Failure: Run returns a Status; the runtime fails the job naming the actor. A kernel never
// aborts the process and never reads or writes outside its views.
#ifndef SOFTWIRE_RUNTIME_KERNELS_KERNEL_H_
#define SOFTWIRE_RUNTIME_KERNELS_KERNEL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/tensor_view.h"
#include "data/data_root.h"
#include "proto/plan.pb.h"
#include "runtime/kernels/parallel_runner.h"

namespace softwire {
namespace runtime {

class Device;

// Receives the values sink actors observe. Implementations must be thread-safe.
class OutputReporter {
 public:
  virtual ~OutputReporter() = default;
  // `output` is the PlanOutput name; `piece` the piece the value belongs to.
  virtual void Report(const std::string& output, int64_t piece, double value) = 0;
};

// Everything a kernel may look at when it is created. Borrowed pointers outlive the kernel.
struct KernelSetup {
  const proto::Plan* plan = nullptr;
  const proto::ActorDef* actor = nullptr;  // actor->kernel is the KernelDef.
  OutputReporter* reporter = nullptr;      // For sink kernels; may be null elsewhere.
  // Where source and variable kernels find the plan's data files (data/data_root.h): the
  // hosting node's data root for this plan.
  data::DataRoot data_root;
};

// One firing's arguments.
struct KernelContext {
  int64_t firing = 0;                    // Firing index.
  int64_t first_piece = 0;               // First piece the firing covers.
  std::vector<TensorView> inputs;        // In ActorDef.input_register order.
  std::vector<TensorView> outputs;       // In ActorDef.output_register order.
  std::vector<bool> output_fill_begins;  // Per output: first firing of this fill.
  // Per output: the slot of its register this firing writes (outputs[i].data's slot). Only a
  // kernel that writes another node's register needs it (a send: runtime/host/send_kernel.h).
  std::vector<int32_t> output_slots;
  void* workspace = nullptr;           // ActorDef.workspace_bytes of scratch.
  void* state = nullptr;               // ActorDef.state_bytes, kept across firings.
  ParallelRunner* parallel = nullptr;  // The device's cores. Never null.
  const Device* device = nullptr;      // What the kernel runs on (Device::NewKernelContext).
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Status Run(const KernelContext& context) = 0;

  // A kernel whose work ends away from its queue (a send: the data plane's writer thread
  // writes its bytes) says so here; a queue that can let go meanwhile (the cpu strand) then
  // calls Start instead of Run, and other kernels run on the queue while the firing's work
  // goes on. Fixed for the kernel's life.
  virtual bool finishes_off_queue() const { return false; }
  // Begins the firing and returns without waiting for it; `done` is called exactly once, when
  // its work ended, from any thread (also before Start returns). Until then the firing's views
  // stay valid and `context` is not reused (the actor's firing is in flight). `done` must not
  // block. The default runs Run and calls `done` at once.
  virtual void Start(const KernelContext& context, std::function<void(Status)> done) {
    done(Run(context));
  }
};

using KernelFactory = std::function<StatusOr<std::unique_ptr<Kernel>>(const KernelSetup&)>;

// Maps op types to kernel factories for one device kind. Built once at start-up by the
// device's registration function (e.g. RegisterCpuKernels) and read-only afterwards, so
// lookups are thread-safe. No global registry: the runtime owns one per device kind.
class KernelRegistry {
 public:
  // CHECK-fails when `op_type` is registered twice.
  void Register(const std::string& op_type, KernelFactory factory);

  bool Contains(const std::string& op_type) const;
  std::vector<std::string> OpTypes() const;

  // Creates the kernel for setup.actor->kernel().op_type(). NotFound names the op type and
  // the actor; other errors come from the factory, prefixed with the actor's name.
  StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) const;

 private:
  std::map<std::string, KernelFactory> factories_;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_KERNEL_H_
