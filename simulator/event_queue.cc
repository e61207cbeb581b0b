#include "simulator/event_queue.h"

#include <algorithm>

namespace softwire {
namespace simulator {

EventQueue::EventQueue(std::vector<SimTime> lane_latencies) {
  lanes_.resize(lane_latencies.size());
  for (size_t i = 0; i < lane_latencies.size(); ++i) {
    CHECK_GE(lane_latencies[i], 0) << "lane " << i << ": negative latency";
    lanes_[i].latency = lane_latencies[i];
  }
}

void EventQueue::PushMessage(int lane, SimTime now, MessageEvent message) {
  CHECK_GE(now, last_push_) << "messages are pushed at a virtual time that never decreases";
  last_push_ = now;
  Lane& target = lanes_[static_cast<size_t>(lane)];
  message.time = now + target.latency;
  message.order = next_order_++;
  target.messages.push_back(message);
  if (++in_flight_ > max_in_flight_) max_in_flight_ = in_flight_;
}

void EventQueue::PushCompletion(SimTime time, int32_t queue) {
  completions_.push_back(CompletionEvent{time, next_order_++, queue});
  std::push_heap(completions_.begin(), completions_.end(), Later());
}

bool EventQueue::empty() const {
  return in_flight_ == 0 && completions_.empty();
}

EventQueue::Kind EventQueue::Pop(MessageEvent* message, CompletionEvent* completion) {
  // The earliest lane head; a handful of lanes (usually one or two), so a scan.
  Lane* best = nullptr;
  for (Lane& lane : lanes_) {
    if (lane.messages.empty()) continue;
    if (best == nullptr || Before(lane.messages.front(), best->messages.front())) best = &lane;
  }
  if (!completions_.empty()) {
    const CompletionEvent& top = completions_.front();
    if (best == nullptr) {
      *completion = top;
      PopCompletion();
      return Kind::kCompletion;
    }
    const MessageEvent& head = best->messages.front();
    if (top.time < head.time || (top.time == head.time && top.order < head.order)) {
      *completion = top;
      PopCompletion();
      return Kind::kCompletion;
    }
  } else if (best == nullptr) {
    return Kind::kNone;
  }
  *message = best->messages.front();
  best->messages.pop_front();
  --in_flight_;
  return Kind::kMessage;
}

void EventQueue::PopCompletion() {
  std::pop_heap(completions_.begin(), completions_.end(), Later());
  completions_.pop_back();
}

}  // namespace simulator
}  // namespace softwire
