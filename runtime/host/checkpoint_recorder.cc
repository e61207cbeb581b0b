#include "runtime/host/checkpoint_recorder.h"

#include <glog/logging.h>

#include <algorithm>

#include "base/file.h"
#include "runtime/host/checkpoint_files.h"

namespace softwire {
namespace runtime {
namespace {}  // namespace

StatusOr<std::unique_ptr<CheckpointRecorder>> CheckpointRecorder::Create(
    const HostedPlan& hosted, CheckpointOptions options) {
  if (options.every < 1) return InvalidArgumentError("checkpoints need every >= 1 steps");
  if (options.keep < 1) return InvalidArgumentError("checkpoints to keep must be at least 1");
  if (!options.deliver) {
    if (options.directory.empty()) return InvalidArgumentError("checkpoints need a directory");
    SOFTWIRE_RETURN_IF_ERROR(MakeDirectories(options.directory));
  }
  SOFTWIRE_ASSIGN_OR_RETURN(TrainingMemory memory, TrainingMemory::Locate(hosted));
  return std::unique_ptr<CheckpointRecorder>(
      new CheckpointRecorder(hosted, std::move(options), std::move(memory)));
}

CheckpointRecorder::CheckpointRecorder(const HostedPlan& hosted, CheckpointOptions options,
                                       TrainingMemory memory)
    : options_(std::move(options)),
      job_name_(hosted.plan().job_name()),
      memory_(std::move(memory)),
      pieces_per_step_(std::max<int64_t>(1, hosted.plan().schedule().pieces_per_step())),
      steps_before_(hosted.steps_before()) {
  for (const VariablePartMemory* part : memory_.DistinctParts()) {
    if (part->update_actor < 0) {
      frozen_parts_.push_back(part);
      continue;
    }
    part_of_actor_[part->update_actor] = part;
    period_of_actor_[part->update_actor] =
        std::max<int64_t>(1, hosted.plan().actor(static_cast<int>(part->update_actor)).period());
    ++parts_per_checkpoint_;
  }
  writer_ = std::thread([this] { WriteLoop(); });
}

CheckpointRecorder::~CheckpointRecorder() {
  Status finished = Finish();
  if (!finished.ok()) LOG(ERROR) << finished;
}

void CheckpointRecorder::UpdateCompleted(int64_t id, int64_t run_firing) {
  auto found = part_of_actor_.find(id);
  if (found == part_of_actor_.end()) return;
  const int64_t pieces = (run_firing + 1) * period_of_actor_.at(id);
  if (pieces % pieces_per_step_ != 0) return;
  const int64_t step = steps_before_ + pieces / pieces_per_step_;
  if (step % options_.every != 0) return;
  const VariablePartMemory& part = *found->second;
  Pending* pending = nullptr;
  {
    MutexLock lock(&mutex_);
    auto [entry, created] = pending_.try_emplace(step);
    pending = &entry->second;
    if (created) {
      pending->parts_left = parts_per_checkpoint_;
      pending->state.step = step;
      memory_.NewLogicalArrays(&pending->state);
      // Frozen variables were written by their first firings, before any step ended, and are
      // only read since.
      for (const VariablePartMemory* frozen : frozen_parts_) {
        Status copied = memory_.CopyPart(*frozen, &pending->state);
        if (!copied.ok() && first_error_.ok()) first_error_ = copied;
      }
    }
  }
  // Parts write disjoint slices of the arrays, which exist: copy without the lock.
  Status copied = memory_.CopyPart(part, &pending->state);
  MutexLock lock(&mutex_);
  if (!copied.ok() && first_error_.ok()) first_error_ = copied;
  if (--pending->parts_left > 0) return;
  if (!ready_.empty()) {
    // The writer is behind: the newer whole state replaces the one still waiting, so the disk
    // always gets the latest and memory holds at most one state being written and one waiting.
    LOG(WARNING) << "checkpoint of step " << ready_.back().step << " not written: step " << step
                 << " was ready before the disk took it (checkpoints more often than the disk "
                    "keeps up with)";
    ready_.pop_back();
  }
  ready_.push_back(std::move(pending->state));
  pending_.erase(step);
  changed_.NotifyAll();
}

void CheckpointRecorder::WriteLoop() {
  MutexLock lock(&mutex_);
  for (;;) {
    while (ready_.empty() && !finishing_) changed_.Wait(&lock);
    if (ready_.empty()) return;  // Finishing, nothing left.
    TrainingState state = std::move(ready_.front());
    ready_.pop_front();
    writing_ = true;
    lock.Unlock();
    const int64_t step = state.step;
    Status saved = options_.deliver
                       ? options_.deliver(std::move(state))
                       : SaveCheckpoint(options_.directory, job_name_, state, options_.keep);
    lock.Lock();
    writing_ = false;
    if (saved.ok() && options_.deliver) {
      ++saved_;
    } else if (saved.ok()) {
      ++saved_;
      if (options_.on_saved) {
        lock.Unlock();
        options_.on_saved(step, CheckpointFolder(options_.directory, step));
        lock.Lock();
      }
    } else if (first_error_.ok()) {
      first_error_ = saved.WithContext("checkpoint of step " + std::to_string(step));
    }
    changed_.NotifyAll();
  }
}

Status CheckpointRecorder::Finish() {
  {
    MutexLock lock(&mutex_);
    finishing_ = true;
    changed_.NotifyAll();
  }
  if (writer_.joinable()) writer_.join();
  MutexLock lock(&mutex_);
  pending_.clear();  // Partial steps of a run that ended early (failed, cancelled): not written.
  return first_error_;
}

int64_t CheckpointRecorder::saved() const {
  MutexLock lock(&mutex_);
  return saved_;
}

}  // namespace runtime
}  // namespace softwire
