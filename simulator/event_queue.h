// EventQueue: the simulator's pending events, popped in (time, insertion order) order, so a
// run is deterministic: two events at the same virtual time come out in the order they were
// pushed.
//
// Two kinds of event, each stored where it is cheapest to order:
//   - messages in flight (Ready, Release, EndOfStream). Every message is delivered a fixed
//     latency after it is sent, and that latency takes one of a few values (within a node,
//     between two nodes). The engine only ever pushes at the current virtual time, which never
//     decreases, so messages of one latency arrive in the order they were sent: each latency
//     gets a FIFO lane, and a push or a pop is O(1) however many messages are in flight (a
//     binary heap would pay O(log n) with n in the hundreds of thousands on a large plan);
//   - kernel completions, whose times vary with each kernel's duration: a binary heap. A device
//     queue runs one kernel at a time, so it never holds more than one entry per device queue.
// Pop takes the earliest of the lanes' heads and the heap's top.
//
// Messages between one pair of actors always share a lane, so they arrive in the order they
// were sent, as docs/PROTOCOL.md requires ("Message order").
//
// Not thread-safe. Allocates only when a lane or the heap outgrows its capacity.
#ifndef SOFTWIRE_SIMULATOR_EVENT_QUEUE_H_
#define SOFTWIRE_SIMULATOR_EVENT_QUEUE_H_

#include <cstdint>
#include <vector>

#include "actors/actor_protocol.h"
#include "simulator/ring_queue.h"
#include "simulator/sim_time.h"

namespace softwire {
namespace simulator {

// A protocol message in flight, delivered at `time`.
struct MessageEvent {
  SimTime time = 0;
  uint64_t order = 0;  // Insertion order: the tie-break.
  int64_t register_id = -1;
  int64_t sequence = 0;
  int32_t to = -1;
  int32_t from = -1;
  int32_t slot = 0;
  actors::OutgoingMessage::Type type = actors::OutgoingMessage::Type::kReady;
};

// The kernel running on device queue `queue` ends at `time`.
struct CompletionEvent {
  SimTime time = 0;
  uint64_t order = 0;
  int32_t queue = -1;
};

class EventQueue {
 public:
  enum class Kind { kNone, kMessage, kCompletion };

  // One lane per latency (>= 0), in the caller's numbering.
  explicit EventQueue(std::vector<SimTime> lane_latencies);

  // Queues `message` for delivery at now + the lane's latency (its time and order are set here).
  // `now` must not be earlier than the `now` of any earlier push (CHECKed): that is what keeps each
  // lane sorted.
  void PushMessage(int lane, SimTime now, MessageEvent message);
  // Queues a completion at `time`, which may not be earlier than the last event popped.
  void PushCompletion(SimTime time, int32_t queue);

  // Removes the earliest event and returns its kind, filling `message` or `completion`;
  // kNone when nothing is pending.
  Kind Pop(MessageEvent* message, CompletionEvent* completion);

  bool empty() const;
  // Events pushed so far (messages and completions).
  uint64_t pushed() const { return next_order_; }
  // Most messages that were in flight at once.
  size_t max_messages_in_flight() const { return max_in_flight_; }

 private:
  struct Lane {
    SimTime latency = 0;
    RingQueue<MessageEvent> messages;
  };
  // Heap order: the earliest (time, order) at the front. A function object, not a function
  // pointer, so std::push_heap and std::pop_heap inline it.
  struct Later {
    bool operator()(const CompletionEvent& a, const CompletionEvent& b) const {
      return a.time != b.time ? a.time > b.time : a.order > b.order;
    }
  };
  static bool Before(const MessageEvent& a, const MessageEvent& b) {
    return a.time != b.time ? a.time < b.time : a.order < b.order;
  }

  void PopCompletion();

  std::vector<Lane> lanes_;
  std::vector<CompletionEvent> completions_;  // A binary heap (std::push_heap with Later).
  uint64_t next_order_ = 0;
  SimTime last_push_ = 0;
  size_t in_flight_ = 0;
  size_t max_in_flight_ = 0;
};

}  // namespace simulator
}  // namespace softwire

#endif  // SOFTWIRE_SIMULATOR_EVENT_QUEUE_H_
