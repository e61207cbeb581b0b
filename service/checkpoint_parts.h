// Checkpoints of a job on nodes, and the state a restarted job resumes from, carried over the
// node stream in VariablePartChunks (the trained variables' chunks, docs/NODES.md):
//
// - A node's share takes its checkpoints as a run in one process does (CheckpointRecorder, the
//   pipeline not stopped), but hands each state to CheckpointPartReports instead of files: the
//   parts the share holds (one replica of each; values and optimizer state) in chunks with
//   checkpoint_step set, then one CheckpointShareSent.
// - The server's CheckpointGatherer stitches the chunks of every node that sends checkpoints
//   into the logical TrainingState and writes it as a run in one process does
//   (SaveCheckpoint: same directory format, whole or absent, the latest K kept), on a thread
//   of its own while the run goes on.
// - A restarted job's state goes to every node of its new layout as ResumePartChunks (whole
//   logical tensors), which the node puts back together with GatheredState before it restores
//   it into its share (runtime::RestoreTrainingState picks each part).
//
//   node:   options.checkpoint.deliver = [&](TrainingState state) {
//             for (auto& report : CheckpointPartReports(memory, state, run_id)) send(report); }
//   server: CheckpointGatherer gatherer(options);  gatherer.ExpectSenders({"node0", "node1"});
//           gatherer.Add(node, chunk);  gatherer.ShareSent(node, sent);  ...  gatherer.Finish();
//
// Threading: CheckpointGatherer is thread-safe (the registry's threads add, its writer thread
// saves); GatheredState is not. The other functions are pure.
#ifndef SOFTWIRE_SERVICE_CHECKPOINT_PARTS_H_
#define SOFTWIRE_SERVICE_CHECKPOINT_PARTS_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "proto/nodes.pb.h"
#include "runtime/host/training_state.h"
#include "service/variable_parts.h"

namespace softwire {
namespace service {

// The reports carrying the parts `memory` describes (one replica each) of `state` (a share's
// checkpoint: its arrays hold these parts), chunked, then a CheckpointShareSent.
StatusOr<std::vector<proto::NodeReport>> CheckpointPartReports(
    const runtime::TrainingMemory& memory, const runtime::TrainingState& state, int64_t run_id);

// Whether a share with this memory sends checkpoints: it holds a trained variable's part.
bool SendsCheckpoints(const runtime::TrainingMemory& memory);

// `state` whole (every variable and optimizer state as one logical part), chunked, as the
// resume_part commands of run `run_id`.
std::vector<proto::VariablePartChunk> ResumePartChunks(const runtime::TrainingState& state,
                                                       int64_t run_id);

// Values and optimizer states from chunks, stitched into a TrainingState.
class GatheredState {
 public:
  // InvalidArgument naming the node and variable for a chunk that does not fit.
  Status Add(const std::string& node, const proto::VariablePartChunk& chunk);
  // The state after `step` steps; FailedPrecondition naming a variable not covered.
  StatusOr<runtime::TrainingState> Take(int64_t step);

 private:
  GatheredVariables values_;
  GatheredVariables optimizer_states_;
};

struct CheckpointGathererOptions {
  std::string directory;  // The job's results/checkpoints.
  std::string job_name;
  int keep = 3;
  // Told about each checkpoint once it is on disk, from the writer thread.
  std::function<void(int64_t step, const std::string& folder)> on_saved;
};

class CheckpointGatherer {
 public:
  explicit CheckpointGatherer(CheckpointGathererOptions options);
  ~CheckpointGatherer();  // Finishes.
  CheckpointGatherer(const CheckpointGatherer&) = delete;
  CheckpointGatherer& operator=(const CheckpointGatherer&) = delete;

  // The nodes whose CheckpointShareSent completes a step (those that acked their attach with
  // sends_checkpoints). Call before the run starts.
  void ExpectSenders(std::set<std::string> nodes) EXCLUDES(mutex_);
  // A chunk of a checkpoint (chunk.checkpoint_step() > 0). An error names the node.
  Status Add(const std::string& node, const proto::VariablePartChunk& chunk) EXCLUDES(mutex_);
  // A node sent all its parts of a step. When every sender did, the step is stitched and
  // queued for the writer (a newer whole step replaces one still waiting, as the recorder
  // does); steps before it that are not whole are dropped.
  Status ShareSent(const std::string& node, const proto::CheckpointShareSent& sent)
      EXCLUDES(mutex_);
  // Waits for the queued saves; the first error of any save or stitch, else OK. Steps not
  // whole by then are dropped.
  Status Finish() EXCLUDES(mutex_);
  int64_t saved() const EXCLUDES(mutex_);

 private:
  struct Step {
    GatheredState parts;
    std::set<std::string> sent;
  };
  void WriteLoop() EXCLUDES(mutex_);

  const CheckpointGathererOptions options_;
  mutable Mutex mutex_;
  CondVar changed_;
  std::set<std::string> senders_ GUARDED_BY(mutex_);
  std::map<int64_t, Step> steps_ GUARDED_BY(mutex_);
  std::deque<runtime::TrainingState> ready_ GUARDED_BY(mutex_);  // One at most.
  bool finishing_ GUARDED_BY(mutex_) = false;
  int64_t saved_ GUARDED_BY(mutex_) = 0;
  Status first_error_ GUARDED_BY(mutex_);
  std::thread writer_;  // Last: starts once everything above is constructed.
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_CHECKPOINT_PARTS_H_
