// RunOnDeviceQueues: runs a whole plan's protocols as a host with in-order device queues would,
// and checks every kernel at the moment it *executes* (not when it launches or completes).
//
// Each launch is appended to the FIFO of its actor's queue (queue_of[actor] >= 0) or, for an
// actor with no queue (-1), to a pool whose firings execute in any order. A seeded generator
// then interleaves, one at a time: delivering a message (ProtocolTestHost's random delivery,
// FIFO per sender and receiver), executing the head of a queue or any pooled firing, and
// reporting the completion of any executed firing (so completions come after random delays,
// out of order across and within actors), each kind of step with a weight drawn per run (a
// device far behind the host, completions reported late, or the reverse). Launches are appended as
// they happen, before any message of the same outbox is delivered: the host duty of
// actors/stream_ordered_edges.h.
//
// At each execution the model checks, against register slots that hold (fill, value, writes):
// every input slot holds exactly the fill the firing binds, all its producer's writes of it
// executed; an in-place (phase-1) write of a fill comes after every phase-0 read of it
// executed; a write that begins a fill in a slot comes after every read and the in-place write
// of the slot's previous fill executed; an accumulation's writes execute in order. Values are
// hashes of what each firing read, so a run computes what a run at one firing at a time with
// completion-only messages does exactly when every firing read the same values.
//
//   std::vector<ActorDescription> actors = *DescribeActors(plan);
//   CHECK(MarkStreamOrderedEdges(&actors, queue_of).ok());
//   QueueRunResult result = RunOnDeviceQueues(actors, queue_of, seed);
//   EXPECT_TRUE(result.violations.empty());
//
// Test-only; not thread-safe.
#ifndef SOFTWIRE_ACTORS_TESTING_DEVICE_QUEUE_RUN_H_
#define SOFTWIRE_ACTORS_TESTING_DEVICE_QUEUE_RUN_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "actors/actor_description.h"
#include "actors/actor_protocol.h"

namespace softwire {
namespace actors {
namespace testing {

// One firing as it executed: its bindings and the values it read and wrote.
struct ExecutedFiring {
  std::vector<SlotBinding> inputs;
  std::vector<SlotBinding> outputs;
  std::vector<int64_t> read;
  std::vector<int64_t> written;
  bool operator==(const ExecutedFiring& other) const;
};

struct QueueRunResult {
  // Per actor, per firing index.
  std::vector<std::map<int64_t, ExecutedFiring>> executed;
  // What broke, in words ("'c1' (3) firing 2 executes reading 'r0' (0) fill 4, but its slot
  // 1 holds fill 6"); also a run that did not finish, a protocol error, occupancy over slots.
  std::vector<std::string> violations;
  int most_in_flight = 0;  // Of any actor at any moment.
  // Firings launched before a fill they read had been written by an executed kernel: the
  // launches that stream-ordered Readies let run ahead of their producers.
  int64_t launches_ahead_of_inputs = 0;
  // Firings that executed reading a fill their actor had already released (stream-ordered
  // Releases).
  int64_t releases_ahead_of_reads = 0;
};

// Runs `actors` (described, and marked or not) to the end with seed `seed`; `queue_of[a]` is
// the queue actor a's launches go to (-1: the pool). Stops at the first violation.
QueueRunResult RunOnDeviceQueues(const std::vector<ActorDescription>& actors,
                                 const std::vector<int64_t>& queue_of, uint64_t seed);

}  // namespace testing
}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_TESTING_DEVICE_QUEUE_RUN_H_
