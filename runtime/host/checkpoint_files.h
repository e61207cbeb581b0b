// Checkpoint files: a TrainingState (training_state.h) saved in a folder of its own under a
// checkpoint directory, whole or not at all, and the latest whole one found again.
//
//   DIR/step-00000100/checkpoint.pbtxt    proto::CheckpointManifest: format, step, job, names
//   DIR/step-00000100/variables/w1.npy    every variable, logical shape
//   DIR/step-00000100/optimizer/w1.npy    float32 [k, logical dims...] (training_state.h)
//
//   Status saved = SaveCheckpoint("ckpt", "mlp", state, /*keep=*/3);
//   StatusOr<TrainingState> latest = LoadLatestCheckpoint("ckpt");
//
// Atomic: the files are written and synced in a hidden folder beside the others
// (".partial-step-00000100-PID"), which is then renamed into place and the directory synced;
// a process killed while writing leaves only a hidden folder, which loading ignores and the next
// save removes. Loading takes the highest step whose files all read back; a damaged folder is
// skipped, saying why. Only one process writes to a checkpoint directory at a time.
//
// Threading: no shared state; calls on different directories may run at once.
#ifndef SOFTWIRE_RUNTIME_HOST_CHECKPOINT_FILES_H_
#define SOFTWIRE_RUNTIME_HOST_CHECKPOINT_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/host/training_state.h"

namespace softwire {
namespace runtime {

// Writes `state` as DIR/step-NNNNNNNN (replacing a folder of that step), then removes all but
// the `keep` latest steps (keep >= 1) and leftover hidden folders. `job` is recorded for the
// reader's messages. Unavailable naming the path when a file cannot be written.
Status SaveCheckpoint(const std::string& directory, const std::string& job,
                      const TrainingState& state, int keep);

// The latest whole checkpoint in `directory`. NotFound naming the directory when it holds none.
// Each newer folder passed over (damaged) adds a line saying why to `skipped` when given.
StatusOr<TrainingState> LoadLatestCheckpoint(const std::string& directory,
                                             std::vector<std::string>* skipped = nullptr);

// "DIR/step-00000100".
std::string CheckpointFolder(const std::string& directory, int64_t step);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_CHECKPOINT_FILES_H_
