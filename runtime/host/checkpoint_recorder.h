// CheckpointRecorder: takes a run's checkpoints while the pipeline runs. Every `every` steps,
// each update actor, right after its firing that ended the step and before it lets go of its
// variable, copies its part of the variable and its optimizer state into that step's
// TrainingState (training_state.h); the actor waits only for its own copy. Once every part of
// a step is in, a writer thread saves it (checkpoint_files.h) while the run goes on.
//
//   CheckpointOptions options{"ckpt", /*every=*/100, /*keep=*/3};
//   StatusOr<std::unique_ptr<CheckpointRecorder>> recorder = CheckpointRecorder::Create(*hosted,
//   options);  // before the run; Execution does this when ExecutionOptions::checkpoint asks
//   (*recorder)->UpdateCompleted(actor, firing);  // from the update actor's handler
//   Status written = (*recorder)->Finish();        // after the run: the pending saves are done
//
// Steps are counted over every run of the hosted plan and from the step a resumed run started
// at (HostedPlan::steps_before), so checkpoint N holds the state after N steps of training.
// Frozen variables never change after their first firing: each checkpoint copies them when its
// first part arrives. Of a data-parallel variable's
// replicas (equal values), one copies. A checkpoint whose save fails is reported by Finish;
// the run itself goes on. One state waits for the writer at most: when a newer step is whole
// before the writer took the waiting one, the newer replaces it, with a warning (the disk cannot
// keep up with `every`), so the latest state is always written.
//
// Threading: UpdateCompleted from actor handlers, concurrently for different actors; Finish
// once, after every actor exited. Ownership: borrows the hosted plan's memory (Create's
// TrainingMemory), which outlives the recorder.
#ifndef SOFTWIRE_RUNTIME_HOST_CHECKPOINT_RECORDER_H_
#define SOFTWIRE_RUNTIME_HOST_CHECKPOINT_RECORDER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "runtime/host/hosted_plan.h"
#include "runtime/host/training_state.h"

namespace softwire {
namespace runtime {

struct CheckpointOptions {
  std::string directory;  // Made when missing. Unused with `deliver`.
  int64_t every = 0;      // Steps between checkpoints; 0: none.
  int keep = 3;           // The latest checkpoints kept.
  // Told about each checkpoint once it is on disk (steps done, its folder), from the writer
  // thread. May be empty.
  std::function<void(int64_t step, const std::string& folder)> on_saved;
  // When set, each state whose parts are all in goes here (from the writer thread) instead of
  // to files: a node's share of a job, whose parts the server gathers (service/
  // checkpoint_parts.h). The state holds this hosted plan's parts only (the rest of its arrays
  // is zero). An error counts as a failed save.
  std::function<Status(TrainingState state)> deliver;
};

class CheckpointRecorder {
 public:
  // InvalidArgument for every < 1, keep < 1, an empty directory, or a plan whose variables
  // cannot be located (training_state.h).
  static StatusOr<std::unique_ptr<CheckpointRecorder>> Create(const HostedPlan& hosted,
                                                              CheckpointOptions options);
  ~CheckpointRecorder();  // Finishes, when Finish was not called.
  CheckpointRecorder(const CheckpointRecorder&) = delete;
  CheckpointRecorder& operator=(const CheckpointRecorder&) = delete;

  // Whether actor `id`'s completions matter: an update actor that copies a part.
  bool Watches(int64_t id) const { return part_of_actor_.count(id) != 0; }
  // Actor `id` completed its firing `run_firing` of this run (it still holds its variable).
  void UpdateCompleted(int64_t id, int64_t run_firing);
  // Waits until the pending saves are done; the first error of any save, else OK.
  Status Finish();

  int64_t saved() const;  // Checkpoints written so far.

 private:
  struct Pending {
    TrainingState state;
    int64_t parts_left = 0;
  };
  CheckpointRecorder(const HostedPlan& hosted, CheckpointOptions options, TrainingMemory memory);
  void WriteLoop();

  const CheckpointOptions options_;
  const std::string job_name_;
  const TrainingMemory memory_;
  const int64_t pieces_per_step_;
  const int64_t steps_before_;
  std::map<int64_t, const VariablePartMemory*> part_of_actor_;  // Update actor -> its part.
  std::map<int64_t, int64_t> period_of_actor_;
  std::vector<const VariablePartMemory*> frozen_parts_;  // Variables without an update actor.
  int64_t parts_per_checkpoint_ = 0;

  mutable Mutex mutex_;
  CondVar changed_;
  std::map<int64_t, Pending> pending_ GUARDED_BY(mutex_);  // By step, parts still coming.
  std::deque<TrainingState> ready_ GUARDED_BY(mutex_);     // Whole, waiting (one at most).
  bool writing_ GUARDED_BY(mutex_) = false;
  bool finishing_ GUARDED_BY(mutex_) = false;
  int64_t saved_ GUARDED_BY(mutex_) = 0;
  Status first_error_ GUARDED_BY(mutex_);
  std::thread writer_;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_CHECKPOINT_RECORDER_H_
