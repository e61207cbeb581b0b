// ShmRing: a ring of fixed-size cells in POSIX shared memory, from one writing process to one
// reading process on the same host: the data plane's same-host path for wire bytes
// (docs/DATA_PLANE.md, "Same host"). The writer copies a fill's bytes into the cells in order,
// the reader copies them out into the wire slot in the same order, each as soon as a cell is
// full (pipelined: both copies run at once, on the two processes' threads). Which fill the
// cells carry, and the order against protocol messages, come from the TCP stream: the writer
// sends the fill's frame header there (after its first cell, outbound_stream.cc), the reader
// takes that many bytes from the ring. A fill starts on a fresh cell: Write and Read handle
// whole cells, the last one partly used.
//
// Cells change hands through an atomic state per cell (empty -> full by the writer, full ->
// empty by the reader). A side waits by spinning briefly, then asleep on the state word (a
// futex on the shared page, woken by the other side's change: a wake-up costs the waker a
// system call only when a sleeper flagged itself, never a fixed sleep step), and gives up with
// Unavailable when `keep_waiting` says so (checked every 2 ms: its stream broke, the data plane
// stops) or after 30 s without progress.
//
// Ownership: the creator (the writer) names the segment and unlinks it when destroyed; the
// reader unlinks it as soon as it has mapped it, so a segment outlives neither process. A
// creator killed before its reader mapped the segment leaves it behind (8 MiB of /dev/shm, and
// a name that a later process of the same pid could not create): the first Create of every
// process removes such orphans (RemoveOrphanedRings).
// Threading: one writing thread and one reading thread at a time.
#ifndef SOFTWIRE_RUNTIME_NET_SHM_RING_H_
#define SOFTWIRE_RUNTIME_NET_SHM_RING_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"

namespace softwire {
namespace runtime {
namespace net {

// Whether `name` has the form Create gives segments: "/softwire-dp-<digits>-<digits>".
bool IsRingName(const std::string& name);

// Unlinks every segment in /dev/shm named as Create names them whose creating process (the pid
// in the name) no longer runs; returns how many. Segments of live processes are left alone,
// also when the pid has been reused by another program (their name then only wastes memory).
// Assumes the processes that share this /dev/shm share its pid namespace, as processes of one
// host or container do.
int RemoveOrphanedRings();

class ShmRing {
 public:
  // A new segment "/softwire-dp-<pid>-<n>" of `cells` cells of `cell_bytes`.
  static StatusOr<std::unique_ptr<ShmRing>> Create(int cells, int64_t cell_bytes);
  // Maps the segment `name` (made by Create in another process) and unlinks it. A name that
  // is not IsRingName's, or a segment that is not laid out as a ring, is refused and left
  // alone (never unlinked): the name comes from a peer.
  static StatusOr<std::unique_ptr<ShmRing>> Open(const std::string& name);
  ~ShmRing();
  ShmRing(const ShmRing&) = delete;
  ShmRing& operator=(const ShmRing&) = delete;

  const std::string& name() const { return name_; }
  int64_t cell_bytes() const;

  // Writer: the `bytes` at `data`, cell by cell.
  Status Write(const char* data, int64_t bytes, const std::function<bool()>& keep_waiting);
  // Reader: the next `bytes` into `data` (null: skip them).
  Status Read(char* data, int64_t bytes, const std::function<bool()>& keep_waiting);

 private:
  struct Header;
  ShmRing(std::string name, bool owner, void* base, int64_t mapped_bytes);
  std::atomic<int32_t>* state(int64_t cell) const;
  // Raised by a side about to sleep on the cell's state; the other side wakes it.
  std::atomic<int32_t>* sleeper(int64_t cell) const;
  // Stores the cell's new state and wakes a side asleep on it.
  void Publish(int64_t cell, int32_t value) const;
  char* cell(int64_t cell) const;
  Status Await(int64_t cell, int32_t wanted, const std::function<bool()>& keep_waiting) const;

  const std::string name_;
  const bool owner_;
  void* const base_;
  const int64_t mapped_bytes_;
  Header* header_;
  int64_t next_ = 0;  // The next cell this side uses (each side has its own object).
};

}  // namespace net
}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_NET_SHM_RING_H_
