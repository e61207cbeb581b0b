// TraceRecorder and TraceWriter: where engines put trace events while a plan runs.
//
// One TraceRecorder per job owns a job-wide arena of `event_cap` events (reserved address
// space; pages are committed as they are first written). Writers claim fixed-size chunks of it
// with one atomic add per chunk, then append with plain stores: recording takes no lock and
// allocates nothing. When the arena is used up, writers count what they could not record
// (`dropped`) and the trace file says so.
//
// A TraceWriter has exactly one writer at a time. The CAF runtime gives every hosted actor its
// own writer: CAF runs one handler of an actor at a time, so the writer needs no lock although
// the actor moves between worker threads (the mailbox hand-off orders the writes). A
// single-threaded engine (the simulator) may use one writer for everything.
//
//   StatusOr<std::unique_ptr<TraceRecorder>> recorder = TraceRecorder::Create(4 << 20, actors);
//   TraceWriter* writer = (*recorder)->writer(actor_id);
//   writer->Append(FiringEvent(...));          // from the actor's handler, or in place:
//   if (TraceEvent* event = writer->Reserve()) { ...fill... }
//   writer->Commit();
//   ... after every writer stopped (threads joined):
//   std::vector<TraceEvent> events = (*recorder)->TakeEvents();
//
// Threading: writers may append concurrently with each other. TakeEvents, dropped() and the
// destructor need every writer stopped, with a happens-before edge (a thread join, a mutex).
#ifndef SOFTWIRE_TRACE_TRACE_RECORDER_H_
#define SOFTWIRE_TRACE_TRACE_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "trace/trace_event.h"

namespace softwire {
namespace trace {

// The default job-wide cap: 4 Mi events (224 MiB of address space, committed only as used).
constexpr int64_t kDefaultEventCap = int64_t{4} << 20;

class TraceRecorder;

class TraceWriter {
 public:
  TraceWriter() = default;

  // Records `event`, or counts it as dropped once the job-wide cap is reached.
  void Append(const TraceEvent& event) {
    if (cursor_ == limit_ && !NextChunk()) {
      ++dropped_;
      return;
    }
    *cursor_++ = event;
  }

  // Room for the next event, to be filled in place (no temporary copy), possibly over time
  // (a firing's cause at its launch, its times at its end), and kept by Commit(); null once the
  // job-wide cap is reached. Until Commit, every Reserve returns the same room.
  TraceEvent* Reserve() {
    if (cursor_ == limit_ && !NextChunk()) return nullptr;
    return cursor_;
  }
  // Keeps the reserved event, or counts it as dropped when Reserve found no room.
  void Commit() {
    if (cursor_ == limit_) {
      ++dropped_;
    } else {
      ++cursor_;
    }
  }

  // Events this writer could not record.
  int64_t dropped() const { return dropped_; }

 private:
  friend class TraceRecorder;
  // Closes the current chunk and claims the next; false when the arena is used up.
  bool NextChunk();
  void CloseChunk();

  TraceRecorder* recorder_ = nullptr;
  TraceEvent* chunk_begin_ = nullptr;
  TraceEvent* cursor_ = nullptr;
  TraceEvent* limit_ = nullptr;
  int64_t chunk_ = -1;
  int64_t dropped_ = 0;
  bool full_ = false;
};

class TraceRecorder {
 public:
  // Reserves room for `event_cap` events (>= 1) shared by `writers` writers (>= 1).
  // ResourceExhausted when the address space cannot be reserved.
  static StatusOr<std::unique_ptr<TraceRecorder>> Create(int64_t event_cap, int writers);
  ~TraceRecorder();
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;

  // Commits the memory of the first `events` events now (at most the cap), so that recording
  // them later takes no page fault. An engine that knows how many events a run will record
  // (the plan's firings) calls it while it sets the run up; without it, pages are committed as
  // writers first touch them (a fault, and the kernel zeroing the page, while recording).
  void Prefault(int64_t events);

  // Writer `index` (0 .. writers-1). Valid as long as the recorder.
  TraceWriter* writer(int index) { return &writers_[static_cast<size_t>(index)]; }
  int writers() const { return static_cast<int>(writers_.size()); }
  int64_t event_cap() const { return event_cap_; }
  // Events per chunk a writer claims at once.
  int64_t chunk_events() const { return chunk_events_; }

  // Every recorded event, writer by writer, each writer's in the order it appended them.
  // The writers start over empty (the arena is reused).
  std::vector<TraceEvent> TakeEvents();
  // Events recorded so far, and events dropped because of the cap.
  int64_t recorded() const;
  int64_t dropped() const;

 private:
  friend class TraceWriter;
  TraceRecorder(int64_t event_cap, int writers);
  // The next unclaimed chunk, or -1 when none is left. Thread-safe.
  int64_t ClaimChunk();

  const int64_t event_cap_;
  int64_t chunk_events_ = 0;
  int64_t chunks_ = 0;
  TraceEvent* arena_ = nullptr;
  size_t arena_bytes_ = 0;
  std::atomic<int64_t> next_chunk_{0};
  // Events written into each chunk, set when its writer closes it.
  std::vector<int64_t> chunk_used_;
  std::vector<TraceWriter> writers_;
};

// Steps [first, end) a trace records; end < 0 means up to the last step.
struct StepWindow {
  int64_t first = 0;
  int64_t end = -1;

  bool all() const { return first <= 0 && end < 0; }
  bool Contains(int64_t step) const { return step >= first && (end < 0 || step < end); }
  // "all", "2:5", "2:".
  std::string ToString() const;
};

// Parses "A:B" (steps A .. B-1), "A:" (A to the end) or "A" (only step A). InvalidArgument
// with the text otherwise, or when the window is empty.
StatusOr<StepWindow> ParseStepWindow(const std::string& text);

}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_TRACE_RECORDER_H_
