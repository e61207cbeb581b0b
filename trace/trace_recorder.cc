#include "trace/trace_recorder.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace softwire {
namespace trace {

bool TraceWriter::NextChunk() {
  if (full_ || recorder_ == nullptr) return false;
  CloseChunk();
  const int64_t chunk = recorder_->ClaimChunk();
  if (chunk < 0) {
    full_ = true;
    chunk_ = -1;
    chunk_begin_ = cursor_ = limit_ = nullptr;
    return false;
  }
  chunk_ = chunk;
  chunk_begin_ = recorder_->arena_ + chunk * recorder_->chunk_events_;
  cursor_ = chunk_begin_;
  const int64_t room =
      std::min(recorder_->chunk_events_, recorder_->event_cap_ - chunk * recorder_->chunk_events_);
  limit_ = chunk_begin_ + room;
  return true;
}

void TraceWriter::CloseChunk() {
  if (chunk_ < 0) return;
  recorder_->chunk_used_[static_cast<size_t>(chunk_)] = cursor_ - chunk_begin_;
}

StatusOr<std::unique_ptr<TraceRecorder>> TraceRecorder::Create(int64_t event_cap, int writers) {
  if (event_cap < 1) return InvalidArgumentError("the trace event cap must be at least 1");
  if (writers < 1) return InvalidArgumentError("a trace needs at least one writer");
  std::unique_ptr<TraceRecorder> recorder(new TraceRecorder(event_cap, writers));
  // Reserved, not committed: the kernel backs a page when a writer first touches it.
  recorder->arena_bytes_ = static_cast<size_t>(event_cap) * sizeof(TraceEvent);
  void* arena = mmap(nullptr, recorder->arena_bytes_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (arena == MAP_FAILED) {
    return ResourceExhaustedError("cannot reserve room for " + std::to_string(event_cap) +
                                  " trace events");
  }
  // Huge pages where the kernel offers them (transparent huge pages in "madvise" mode):
  // one fault per 2 MiB instead of one per 4 KiB while recording. Advice only; ignored where
  // unsupported.
  madvise(arena, recorder->arena_bytes_, MADV_HUGEPAGE);
  recorder->arena_ = static_cast<TraceEvent*>(arena);
  return recorder;
}

TraceRecorder::TraceRecorder(int64_t event_cap, int writers)
    : event_cap_(event_cap), writers_(static_cast<size_t>(writers)) {
  // Small enough that a job with many mostly idle writers does not strand the cap in
  // half-empty chunks, large enough that the claim (one atomic add) is rare.
  chunk_events_ = std::clamp<int64_t>(event_cap / (4 * int64_t{writers}), 16, 4096);
  chunks_ = (event_cap + chunk_events_ - 1) / chunk_events_;
  chunk_used_.assign(static_cast<size_t>(chunks_), 0);
  for (TraceWriter& writer : writers_) writer.recorder_ = this;
}

void TraceRecorder::Prefault(int64_t events) {
  const size_t bytes =
      static_cast<size_t>(std::clamp<int64_t>(events, 0, event_cap_)) * sizeof(TraceEvent);
  if (bytes == 0) return;
#ifdef MADV_POPULATE_WRITE
  if (madvise(arena_, bytes, MADV_POPULATE_WRITE) == 0) return;
#endif
  // Older kernels: write one byte per page.
  const long page = sysconf(_SC_PAGESIZE);
  char* base = reinterpret_cast<char*>(arena_);
  for (size_t offset = 0; offset < bytes; offset += static_cast<size_t>(page)) base[offset] = 0;
}

TraceRecorder::~TraceRecorder() {
  if (arena_ != nullptr) munmap(arena_, arena_bytes_);
}

int64_t TraceRecorder::ClaimChunk() {
  // Relaxed: the claimed index is all a writer needs; the chunk's memory is written only by
  // its claimer, and read only after the writers stopped.
  int64_t chunk = next_chunk_.fetch_add(1, std::memory_order_relaxed);
  return chunk < chunks_ ? chunk : -1;
}

std::vector<TraceEvent> TraceRecorder::TakeEvents() {
  for (TraceWriter& writer : writers_) writer.CloseChunk();
  std::vector<TraceEvent> events;
  events.reserve(static_cast<size_t>(recorded()));
  const int64_t claimed = std::min(next_chunk_.load(), chunks_);
  for (int64_t chunk = 0; chunk < claimed; ++chunk) {
    const TraceEvent* begin = arena_ + chunk * chunk_events_;
    events.insert(events.end(), begin, begin + chunk_used_[static_cast<size_t>(chunk)]);
    chunk_used_[static_cast<size_t>(chunk)] = 0;
  }
  next_chunk_.store(0);
  for (TraceWriter& writer : writers_) {
    writer.chunk_ = -1;
    writer.chunk_begin_ = writer.cursor_ = writer.limit_ = nullptr;
    writer.full_ = false;
  }
  return events;
}

int64_t TraceRecorder::recorded() const {
  int64_t total = 0;
  for (int64_t used : chunk_used_) total += used;
  for (const TraceWriter& writer : writers_) {
    if (writer.chunk_ >= 0) {
      // The open chunk's count is stored only when it closes.
      total +=
          (writer.cursor_ - writer.chunk_begin_) - chunk_used_[static_cast<size_t>(writer.chunk_)];
    }
  }
  return total;
}

int64_t TraceRecorder::dropped() const {
  int64_t total = 0;
  for (const TraceWriter& writer : writers_) total += writer.dropped_;
  return total;
}

std::string StepWindow::ToString() const {
  if (all()) return "all";
  std::string text = std::to_string(first) + ":";
  if (end >= 0) text += std::to_string(end);
  return text;
}

namespace {

bool ParseCount(const std::string& text, int64_t* value) {
  if (text.empty() || text.size() > 18) return false;
  int64_t result = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    result = result * 10 + (c - '0');
  }
  *value = result;
  return true;
}

}  // namespace

StatusOr<StepWindow> ParseStepWindow(const std::string& text) {
  StepWindow window;
  const size_t colon = text.find(':');
  bool ok;
  if (colon == std::string::npos) {
    ok = ParseCount(text, &window.first);
    window.end = window.first + 1;
  } else {
    ok = ParseCount(text.substr(0, colon), &window.first);
    const std::string end = text.substr(colon + 1);
    if (ok && !end.empty()) ok = ParseCount(end, &window.end);
  }
  if (!ok) {
    return InvalidArgumentError("bad step window '" + text +
                                "': expected A:B (steps A to B-1), A: or A, counted from 0");
  }
  if (window.end >= 0 && window.end <= window.first) {
    return InvalidArgumentError("step window '" + text + "' holds no step");
  }
  return window;
}

}  // namespace trace
}  // namespace softwire
