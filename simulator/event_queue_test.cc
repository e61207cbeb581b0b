#include "simulator/event_queue.h"

#include <gtest/gtest.h>

#include <vector>

namespace softwire {
namespace simulator {
namespace {

MessageEvent MessageTo(int32_t to) {
  MessageEvent message;
  message.to = to;
  return message;
}

// Pops everything, naming each event "m<to>" or "c<queue>" with its time.
std::vector<std::pair<std::string, SimTime>> Drain(EventQueue* queue) {
  std::vector<std::pair<std::string, SimTime>> order;
  MessageEvent message;
  CompletionEvent completion;
  while (true) {
    const EventQueue::Kind kind = queue->Pop(&message, &completion);
    if (kind == EventQueue::Kind::kNone) break;
    if (kind == EventQueue::Kind::kMessage) {
      order.emplace_back("m" + std::to_string(message.to), message.time);
    } else {
      order.emplace_back("c" + std::to_string(completion.queue), completion.time);
    }
  }
  return order;
}

TEST(EventQueueTest, PopsEventsByTimeAcrossLanesAndCompletions) {
  EventQueue queue({/*lane 0*/ 5, /*lane 1*/ 20});
  queue.PushMessage(1, 0, MessageTo(1));  // At 20.
  queue.PushMessage(0, 0, MessageTo(2));  // At 5.
  queue.PushCompletion(12, 7);
  queue.PushMessage(0, 3, MessageTo(3));  // At 8.
  const std::vector<std::pair<std::string, SimTime>> expected = {
      {"m2", 5}, {"m3", 8}, {"c7", 12}, {"m1", 20}};
  EXPECT_EQ(Drain(&queue), expected);
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.pushed(), 4u);
}

TEST(EventQueueTest, BreaksTiesAtOneTimeByInsertionOrder) {
  EventQueue queue({0, 10});
  queue.PushCompletion(10, 1);             // Pushed first.
  queue.PushMessage(1, 0, MessageTo(4));   // At 10, pushed second.
  queue.PushMessage(0, 10, MessageTo(5));  // At 10, pushed third.
  queue.PushCompletion(10, 2);             // Pushed fourth.
  const std::vector<std::pair<std::string, SimTime>> expected = {
      {"c1", 10}, {"m4", 10}, {"m5", 10}, {"c2", 10}};
  EXPECT_EQ(Drain(&queue), expected);
}

TEST(EventQueueTest, KeepsTheOrderOfMessagesOnOneLaneThroughGrowth) {
  EventQueue queue({1});
  // Interleave pushes and pops so the ring wraps around and grows while holding messages.
  std::vector<int32_t> popped;
  MessageEvent message;
  CompletionEvent completion;
  int32_t next = 0;
  for (SimTime now = 0; now < 300; ++now) {
    queue.PushMessage(0, now, MessageTo(next++));
    queue.PushMessage(0, now, MessageTo(next++));
    ASSERT_EQ(queue.Pop(&message, &completion), EventQueue::Kind::kMessage);
    popped.push_back(message.to);
  }
  while (queue.Pop(&message, &completion) == EventQueue::Kind::kMessage) {
    popped.push_back(message.to);
  }
  ASSERT_EQ(popped.size(), 600u);
  for (int32_t i = 0; i < 600; ++i) EXPECT_EQ(popped[static_cast<size_t>(i)], i);
  EXPECT_EQ(queue.max_messages_in_flight(), 301u);
}

TEST(EventQueueTest, OrdersManyCompletionsByTime) {
  EventQueue queue({0});
  const std::vector<SimTime> times = {50, 10, 40, 10, 30, 20, 60, 0};
  for (size_t i = 0; i < times.size(); ++i) {
    queue.PushCompletion(times[i], static_cast<int32_t>(i));
  }
  const std::vector<std::pair<std::string, SimTime>> expected = {{"c7", 0},  {"c1", 10}, {"c3", 10},
                                                                 {"c5", 20}, {"c4", 30}, {"c2", 40},
                                                                 {"c0", 50}, {"c6", 60}};
  EXPECT_EQ(Drain(&queue), expected);
}

}  // namespace
}  // namespace simulator
}  // namespace softwire
