// TrainingState: what a training run carries from one step to the next, as logical tensors that
// do not depend on the parallel layout: every variable's value, every trained variable's
// optimizer state, and the steps done. A checkpoint saves one (checkpoint_files.h); a run resumes
// from one on any layout of the same job, because each hosted plan reads and writes its own
// parts of the logical tensors.
//
//   StatusOr<TrainingMemory> memory = TrainingMemory::Locate(*hosted);
//   StatusOr<TrainingState> state = memory->Read(steps_done);       // between runs
//   Status restored = RestoreTrainingState(*state, hosted.get());   // before the first run
//
// Data positions need no saving: a source fills piece p from samples p * micro-batch on
// (data/dataset.h), so the step count places every source, and no kernel draws random numbers.
// The optimizer's step count is the update actors' firing count, which the hosted plan's piece
// numbering continues (HostedPlan::ContinueFrom).
//
// Threading: Read and Restore only while no execution of the hosted plan runs; CopyPart (the
// checkpoint recorder's snapshot during a run) from the update actor that owns the part, between
// its firings. Ownership: TrainingMemory borrows the hosted plan's memory and must not outlive it.
#ifndef SOFTWIRE_RUNTIME_HOST_TRAINING_STATE_H_
#define SOFTWIRE_RUNTIME_HOST_TRAINING_STATE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/npy.h"
#include "base/shape.h"
#include "base/status.h"
#include "runtime/host/hosted_plan.h"
#include "runtime/host/tensor_slice.h"

namespace softwire {
namespace runtime {

struct TrainingState {
  int64_t step = 0;  // Steps completed.
  // Every variable's value, by name, in its logical shape.
  std::map<std::string, NpyArray> variables;
  // The optimizer state of every variable whose optimizer keeps one, by variable name: float32
  // [k, logical dims...], k = 1 for sgd with momentum (the velocity), 2 for adam (m then v).
  std::map<std::string, NpyArray> optimizer_state;
};

// One part of a variable as a hosted plan keeps it: the variable actor's register (every slot)
// and, for a trained variable, its update actor's optimizer state.
struct VariablePartMemory {
  std::string variable;
  Shape logical;
  DType dtype = DType::kInvalid;
  TensorSlice slice;
  // The register's slots. A variable's register has one slot (the compiler's rule; its update
  // actor changes it in place), which holds the value; a restore writes every slot.
  std::vector<char*> value_slots;
  int64_t value_bytes = 0;    // Bytes of one slot.
  int64_t part_elements = 0;  // Elements of the part (the slice of the logical shape).
  int64_t update_actor = -1;  // -1: a frozen variable (no update actor).
  char* state = nullptr;      // The update actor's state; null when it keeps none.
  int64_t state_floats_per_element = 0;
  // The device holding the part. On a device whose memory the host cannot address (cuda) the
  // bytes are staged through host memory with Device::CopyToHost / CopyFromHost.
  const Device* device = nullptr;
};

class TrainingMemory {
 public:
  // Finds every variable part `hosted` keeps in memory (parts on sim devices have none and are
  // left out). A data-parallel variable has a part per replica; all of them are listed.
  static StatusOr<TrainingMemory> Locate(const HostedPlan& hosted);

  const std::vector<VariablePartMemory>& parts() const { return parts_; }
  // One part per distinct slice of each variable: the replicas of a data-parallel part hold
  // equal values, so readers that want each value once skip them.
  std::vector<const VariablePartMemory*> DistinctParts() const;

  // The state as it is now, `step` steps done (one replica of each part read).
  StatusOr<TrainingState> Read(int64_t step) const;

  // Copies one part (its value, and its optimizer state) into `state`, whose arrays for that
  // variable must exist with the logical shapes (NewLogicalArrays).
  Status CopyPart(const VariablePartMemory& part, TrainingState* state) const;
  // Adds zeroed logical arrays for every variable and optimizer state this memory holds.
  void NewLogicalArrays(TrainingState* state) const;

 private:
  std::vector<VariablePartMemory> parts_;
};

// Writes `state` into every part `hosted` keeps (each slot of each variable register, each
// update actor's state) and continues the hosted plan's numbering from `state.step` steps
// (HostedPlan::ContinueFrom), so its first run starts at step state.step + 1 with the next
// batches. InvalidArgument naming the variable when the state lacks one of the plan's variables,
// its shape or dtype differs, or the optimizer state does not fit (another optimizer).
Status RestoreTrainingState(const TrainingState& state, HostedPlan* hosted);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_TRAINING_STATE_H_
