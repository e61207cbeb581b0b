#include "service/checkpoint_parts.h"

#include <glog/logging.h>

#include <algorithm>
#include <utility>

#include "base/file.h"
#include "proto/tensor_desc.h"
#include "runtime/host/checkpoint_files.h"
#include "runtime/host/tensor_slice.h"

namespace softwire {
namespace service {
namespace {

// `head` (a chunk without data) repeated over `bytes` in pieces of kVariableChunkBytes; one
// empty chunk for an empty part.
std::vector<proto::VariablePartChunk> Chunked(const proto::VariablePartChunk& head,
                                              const std::string& bytes) {
  std::vector<proto::VariablePartChunk> chunks;
  const int64_t size = static_cast<int64_t>(bytes.size());
  for (int64_t offset = 0; offset < size || offset == 0; offset += kVariableChunkBytes) {
    proto::VariablePartChunk chunk = head;
    chunk.set_part_bytes(size);
    chunk.set_offset(offset);
    const int64_t length = std::max<int64_t>(0, std::min(kVariableChunkBytes, size - offset));
    chunk.set_data(bytes.data() + offset, static_cast<size_t>(length));
    chunks.push_back(std::move(chunk));
    if (size == 0) break;
  }
  return chunks;
}

Shape WithLeading(int64_t leading, const Shape& shape) {
  std::vector<int64_t> dims = {leading};
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  return Shape(dims);
}

// The packed part `slice` of `array` (logical `shape`, `element_bytes` each).
StatusOr<std::string> PackedPart(const runtime::TensorSlice& slice, const Shape& shape,
                                 int64_t element_bytes, const NpyArray& array,
                                 const std::string& what) {
  const int64_t elements =
      slice.axis < 0 ? shape.NumElements()
                     : shape.NumElements() / shape.dims()[slice.axis] * (slice.end - slice.begin);
  std::string bytes(static_cast<size_t>(elements * element_bytes), '\0');
  SOFTWIRE_RETURN_IF_ERROR(runtime::CopyLogicalToPart(slice, shape, element_bytes,
                                                      array.data.data(), bytes.data(),
                                                      static_cast<int64_t>(bytes.size()), what));
  return bytes;
}

}  // namespace

StatusOr<std::vector<proto::NodeReport>> CheckpointPartReports(
    const runtime::TrainingMemory& memory, const runtime::TrainingState& state, int64_t run_id) {
  std::vector<proto::NodeReport> reports;
  auto add = [&](const proto::VariablePartChunk& head, const std::string& bytes) {
    for (proto::VariablePartChunk& chunk : Chunked(head, bytes)) {
      *reports.emplace_back().mutable_variable_part() = std::move(chunk);
    }
  };
  for (const runtime::VariablePartMemory* part : memory.DistinctParts()) {
    const std::string what = "variable '" + part->variable + "'";
    auto value = state.variables.find(part->variable);
    if (value == state.variables.end()) return InternalError(what + " is not in the checkpoint");
    proto::VariablePartChunk head;
    head.set_run_id(run_id);
    head.set_checkpoint_step(state.step);
    head.set_variable(part->variable);
    *head.mutable_logical() = TensorDescOf(part->dtype, part->logical);
    head.set_split_axis(part->slice.axis);
    head.set_split_begin(part->slice.begin);
    head.set_split_end(part->slice.end);
    SOFTWIRE_ASSIGN_OR_RETURN(
        std::string bytes,
        PackedPart(part->slice, part->logical, SizeOf(part->dtype), value->second, what));
    add(head, bytes);
    if (part->state == nullptr) continue;
    auto moments = state.optimizer_state.find(part->variable);
    if (moments == state.optimizer_state.end()) {
      return InternalError(what + ": its optimizer state is not in the checkpoint");
    }
    // The state [k, dims...]: the part is the same slice one axis further in.
    const Shape shape = WithLeading(part->state_floats_per_element, part->logical);
    runtime::TensorSlice slice = part->slice;
    if (slice.axis >= 0) ++slice.axis;
    head.set_optimizer_state(true);
    *head.mutable_logical() = TensorDescOf(DType::kFloat32, shape);
    head.set_split_axis(slice.axis);
    SOFTWIRE_ASSIGN_OR_RETURN(
        bytes, PackedPart(slice, shape, sizeof(float), moments->second, what + " optimizer state"));
    add(head, bytes);
  }
  proto::CheckpointShareSent* sent = reports.emplace_back().mutable_checkpoint_sent();
  sent->set_run_id(run_id);
  sent->set_step(state.step);
  return reports;
}

bool SendsCheckpoints(const runtime::TrainingMemory& memory) {
  for (const runtime::VariablePartMemory& part : memory.parts()) {
    if (part.update_actor >= 0) return true;
  }
  return false;
}

std::vector<proto::VariablePartChunk> ResumePartChunks(const runtime::TrainingState& state,
                                                       int64_t run_id) {
  std::vector<proto::VariablePartChunk> chunks;
  auto add = [&](const std::string& name, const NpyArray& array, bool optimizer_state) {
    proto::VariablePartChunk head;
    head.set_run_id(run_id);
    head.set_checkpoint_step(state.step);
    head.set_variable(name);
    *head.mutable_logical() = TensorDescOf(array.dtype, array.shape);
    head.set_split_axis(-1);
    head.set_optimizer_state(optimizer_state);
    for (proto::VariablePartChunk& chunk :
         Chunked(head, std::string(array.data.begin(), array.data.end()))) {
      chunks.push_back(std::move(chunk));
    }
  };
  for (const auto& [name, array] : state.variables) add(name, array, false);
  for (const auto& [name, array] : state.optimizer_state) add(name, array, true);
  return chunks;
}

Status GatheredState::Add(const std::string& node, const proto::VariablePartChunk& chunk) {
  return chunk.optimizer_state() ? optimizer_states_.Add(node, chunk) : values_.Add(node, chunk);
}

StatusOr<runtime::TrainingState> GatheredState::Take(int64_t step) {
  runtime::TrainingState state;
  state.step = step;
  SOFTWIRE_ASSIGN_OR_RETURN(state.variables, values_.Take());
  SOFTWIRE_ASSIGN_OR_RETURN(state.optimizer_state, optimizer_states_.Take());
  return state;
}

CheckpointGatherer::CheckpointGatherer(CheckpointGathererOptions options)
    : options_(std::move(options)), writer_([this] { WriteLoop(); }) {}

CheckpointGatherer::~CheckpointGatherer() {
  Status finished = Finish();
  if (!finished.ok()) LOG(ERROR) << finished;
}

void CheckpointGatherer::ExpectSenders(std::set<std::string> nodes) {
  MutexLock lock(&mutex_);
  senders_ = std::move(nodes);
}

Status CheckpointGatherer::Add(const std::string& node, const proto::VariablePartChunk& chunk) {
  MutexLock lock(&mutex_);
  if (finishing_) return Status::Ok();
  return steps_[chunk.checkpoint_step()]
      .parts.Add(node, chunk)
      .WithContext("checkpoint of step " + std::to_string(chunk.checkpoint_step()));
}

Status CheckpointGatherer::ShareSent(const std::string& node,
                                     const proto::CheckpointShareSent& sent) {
  const std::string what = "checkpoint of step " + std::to_string(sent.step());
  MutexLock lock(&mutex_);
  if (finishing_) return Status::Ok();
  if (!sent.error().empty()) {  // That node could not take it: the step is never whole.
    LOG(WARNING) << what << " skipped: node '" << node << "': " << sent.error();
    steps_.erase(sent.step());
    return Status::Ok();
  }
  Step& step = steps_[sent.step()];
  step.sent.insert(node);
  for (const std::string& sender : senders_) {
    if (step.sent.count(sender) == 0) return Status::Ok();
  }
  StatusOr<runtime::TrainingState> state = step.parts.Take(sent.step());
  // This step and every older one (never whole: a node's recorder skipped it) are done with.
  steps_.erase(steps_.begin(), steps_.upper_bound(sent.step()));
  if (!state.ok()) return state.status().WithContext(what);
  if (!ready_.empty()) {
    LOG(WARNING) << "checkpoint of step " << ready_.back().step << " not written: step "
                 << sent.step() << " was whole before the disk took it";
    ready_.pop_back();
  }
  ready_.push_back(std::move(*state));
  changed_.NotifyAll();
  return Status::Ok();
}

void CheckpointGatherer::WriteLoop() {
  MutexLock lock(&mutex_);
  for (;;) {
    while (ready_.empty() && !finishing_) changed_.Wait(&lock);
    if (ready_.empty()) return;  // Finishing, nothing left.
    runtime::TrainingState state = std::move(ready_.front());
    ready_.pop_front();
    lock.Unlock();
    Status saved = MakeDirectories(options_.directory);
    if (saved.ok()) {
      saved = runtime::SaveCheckpoint(options_.directory, options_.job_name, state, options_.keep);
    }
    if (saved.ok() && options_.on_saved) {
      options_.on_saved(state.step, runtime::CheckpointFolder(options_.directory, state.step));
    }
    lock.Lock();
    if (saved.ok()) {
      ++saved_;
    } else if (first_error_.ok()) {
      first_error_ = saved.WithContext("checkpoint of step " + std::to_string(state.step));
    }
  }
}

Status CheckpointGatherer::Finish() {
  {
    MutexLock lock(&mutex_);
    finishing_ = true;
    changed_.NotifyAll();
  }
  if (writer_.joinable()) writer_.join();
  MutexLock lock(&mutex_);
  steps_.clear();
  return first_error_;
}

int64_t CheckpointGatherer::saved() const {
  MutexLock lock(&mutex_);
  return saved_;
}

}  // namespace service
}  // namespace softwire
