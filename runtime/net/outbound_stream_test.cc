// OutboundStream against a raw socket that reads when the test says: a large fill goes out on
// the writer thread (SendBytes returns while its bytes are still unread, as a send's firing
// lets its device's strand go), a small one on an idle stream on the caller's thread; a fill
// queued behind one in flight completes Cancelled, unwritten, once its job's stop flag is
// raised; the one in flight completes once its bytes are out; a message queued behind fills
// not yet begun goes out before them (never inside the one being written).
#include "runtime/net/outbound_stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace softwire {
namespace runtime {
namespace net {
namespace {

using namespace std::chrono_literals;

// A connected pair: `sender` for the stream, `receiver` read by the test.
struct SocketPair {
  Socket sender;
  Socket receiver;
};

SocketPair Connect() {
  StatusOr<Socket> listener = Socket::Listen("127.0.0.1:0");
  EXPECT_TRUE(listener.ok()) << listener.status();
  StatusOr<std::string> address = listener->LocalAddress();
  EXPECT_TRUE(address.ok()) << address.status();
  StatusOr<Socket> sender = Socket::Connect(*address, 5000ms);
  EXPECT_TRUE(sender.ok()) << sender.status();
  StatusOr<Socket> receiver = listener->Accept();
  EXPECT_TRUE(receiver.ok()) << receiver.status();
  return {std::move(sender).value(), std::move(receiver).value()};
}

FrameHeader FillHeader(int64_t register_id, int64_t bytes) {
  FrameHeader header;
  header.type = FrameType::kWireBytes;
  header.job = 5;
  header.register_id = register_id;
  header.payload_bytes = bytes;
  return header;
}

// Reads one fill's frame; returns its header (payload read into `payload`).
FrameHeader ReadFill(Socket* socket, std::vector<char>* payload) {
  FrameHeader header;
  EXPECT_TRUE(socket->ReceiveAll(&header, sizeof(header)).ok());
  payload->assign(static_cast<size_t>(header.payload_bytes), 0);
  EXPECT_TRUE(socket->ReceiveAll(payload->data(), header.payload_bytes).ok());
  return header;
}

TEST(OutboundStreamTest, ALargeFillGoesOutOnTheWriterThreadWhileTheCallerMovesOn) {
  SocketPair pair = Connect();
  OutboundStream stream(std::move(pair.sender), "peer", 1 << 20, [](const Status&) {});
  // Far more than the socket buffers hold: written inline, SendBytes would block until the
  // test reads, which it does only after SendBytes returned.
  const std::vector<char> bytes(64 << 20, 'a');
  std::promise<std::thread::id> done_on;
  std::promise<Status> done_status;
  stream.SendBytes(FillHeader(1, static_cast<int64_t>(bytes.size())), bytes.data(),
                   [&](Status status) {
                     done_on.set_value(std::this_thread::get_id());
                     done_status.set_value(std::move(status));
                   });
  std::future<Status> completed = done_status.get_future();
  EXPECT_EQ(completed.wait_for(0ms), std::future_status::timeout) << "written on the caller";
  std::vector<char> payload;
  const FrameHeader header = ReadFill(&pair.receiver, &payload);
  EXPECT_EQ(header.register_id, 1);
  EXPECT_EQ(payload, bytes);
  ASSERT_EQ(completed.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(completed.get().ok());
  EXPECT_NE(done_on.get_future().get(), std::this_thread::get_id());
}

TEST(OutboundStreamTest, ASmallFillOnAnIdleStreamIsWrittenOnTheCallersThread) {
  SocketPair pair = Connect();
  OutboundStream stream(std::move(pair.sender), "peer", 1 << 20, [](const Status&) {});
  const std::vector<char> bytes(64 << 10, 'b');
  std::thread::id done_on;
  bool ok = false;
  stream.SendBytes(FillHeader(2, static_cast<int64_t>(bytes.size())), bytes.data(),
                   [&](Status status) {
                     done_on = std::this_thread::get_id();
                     ok = status.ok();
                   });
  EXPECT_TRUE(ok);  // Completed before SendBytes returned, on this thread.
  EXPECT_EQ(done_on, std::this_thread::get_id());
  std::vector<char> payload;
  EXPECT_EQ(ReadFill(&pair.receiver, &payload).register_id, 2);
  EXPECT_EQ(payload, bytes);
}

// The writer thread is not woken when a caller writes inline and leaves nothing queued; a
// message queued while a caller writes a fill is then the caller's to hand over when it is done.
TEST(OutboundStreamTest, AMessageQueuedWhileTheCallerWritesAFillGoesOutOnceTheFillIsDone) {
  SocketPair pair = Connect();
  const std::vector<char> bytes(64 << 20, 'h');  // Blocks the caller until the test reads.
  OutboundStream stream(
      std::move(pair.sender), "peer", 1 << 20, [](const Status&) {}, nullptr,
      /*inline_bytes=*/static_cast<int64_t>(bytes.size()));
  std::promise<std::thread::id> done_on;
  std::thread caller([&] {
    stream.SendBytes(FillHeader(10, static_cast<int64_t>(bytes.size())), bytes.data(),
                     [&](Status status) {
                       EXPECT_TRUE(status.ok()) << status;
                       done_on.set_value(std::this_thread::get_id());
                     });
  });
  const std::thread::id caller_id = caller.get_id();
  FrameHeader header;
  ASSERT_TRUE(pair.receiver.ReceiveAll(&header, sizeof(header)).ok());  // It has begun.
  EXPECT_EQ(header.register_id, 10);
  actors::ProtocolMessage message;
  message.job = 5;
  message.register_id = 11;
  stream.SendMessage(message);  // Queued: the caller owns the socket.
  std::vector<char> payload(bytes.size());
  ASSERT_TRUE(pair.receiver.ReceiveAll(payload.data(), header.payload_bytes).ok());
  EXPECT_EQ(payload, bytes);
  caller.join();
  EXPECT_EQ(done_on.get_future().get(), caller_id);  // Written inline, on the caller's thread.
  // The message follows without any further call on the stream.
  std::future<Status> next = std::async(std::launch::async, [&] {
    Status status = pair.receiver.ReceiveAll(&header, sizeof(header));
    if (!status.ok()) return status;
    actors::ProtocolMessage received;
    status = pair.receiver.ReceiveAll(&received, sizeof(received));
    if (status.ok() && received.register_id != 11) status = InternalError("another message");
    return status;
  });
  if (next.wait_for(10s) != std::future_status::ready) {
    pair.receiver.Shutdown();  // Ends the read; the test fails.
    FAIL() << "the queued message never went out";
  }
  EXPECT_TRUE(next.get().ok());
  EXPECT_EQ(header.type, FrameType::kMessage);
}

TEST(OutboundStreamTest, AStoppedJobsQueuedFillIsCancelledUnwrittenAndTheOneInFlightFinishes) {
  SocketPair pair = Connect();
  OutboundStream stream(std::move(pair.sender), "peer", 1 << 20, [](const Status&) {});
  std::atomic<bool> stopping{false};
  const std::vector<char> first(64 << 20, 'c');  // Blocks the writer until the test reads.
  const std::vector<char> second(4 << 20, 'd');
  std::promise<Status> first_done;
  std::promise<Status> second_done;
  stream.SendBytes(
      FillHeader(3, static_cast<int64_t>(first.size())), first.data(),
      [&](Status status) { first_done.set_value(std::move(status)); }, &stopping);
  // The writer has begun the first fill once its header arrives.
  FrameHeader header;
  ASSERT_TRUE(pair.receiver.ReceiveAll(&header, sizeof(header)).ok());
  EXPECT_EQ(header.register_id, 3);
  stream.SendBytes(
      FillHeader(4, static_cast<int64_t>(second.size())), second.data(),
      [&](Status status) { second_done.set_value(std::move(status)); }, &stopping);
  stopping.store(true);
  std::future<Status> first_future = first_done.get_future();
  std::future<Status> second_future = second_done.get_future();
  EXPECT_EQ(first_future.wait_for(0ms), std::future_status::timeout);
  // Read the first fill's bytes: it finishes, then the second is dropped unwritten.
  std::vector<char> payload(first.size());
  ASSERT_TRUE(pair.receiver.ReceiveAll(payload.data(), header.payload_bytes).ok());
  EXPECT_EQ(payload, first);
  ASSERT_EQ(first_future.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(first_future.get().ok());
  ASSERT_EQ(second_future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(second_future.get().code(), StatusCode::kCancelled);
  // Nothing of the second went out: the next thing on the stream is a message sent now.
  actors::ProtocolMessage message;
  message.job = 5;
  stream.SendMessage(message);
  ASSERT_TRUE(pair.receiver.ReceiveAll(&header, sizeof(header)).ok());
  EXPECT_EQ(header.type, FrameType::kMessage);
}

TEST(OutboundStreamTest, AMessagePassesFillsNotYetBegunButNotTheOneBeingWritten) {
  SocketPair pair = Connect();
  OutboundStream stream(std::move(pair.sender), "peer", 1 << 20, [](const Status&) {});
  const std::vector<char> first(64 << 20, 'f');  // Blocks the writer until the test reads.
  const std::vector<char> second(4 << 20, 'g');
  std::promise<Status> first_done;
  std::promise<Status> second_done;
  stream.SendBytes(FillHeader(7, static_cast<int64_t>(first.size())), first.data(),
                   [&](Status status) { first_done.set_value(std::move(status)); });
  FrameHeader header;
  ASSERT_TRUE(pair.receiver.ReceiveAll(&header, sizeof(header)).ok());  // It has begun.
  EXPECT_EQ(header.register_id, 7);
  stream.SendBytes(FillHeader(8, static_cast<int64_t>(second.size())), second.data(),
                   [&](Status status) { second_done.set_value(std::move(status)); });
  actors::ProtocolMessage message;
  message.job = 5;
  message.register_id = 9;
  stream.SendMessage(message);  // A Ready of a fill written earlier.
  std::vector<char> payload(first.size());
  ASSERT_TRUE(pair.receiver.ReceiveAll(payload.data(), header.payload_bytes).ok());
  // Then the message, then the second fill.
  ASSERT_TRUE(pair.receiver.ReceiveAll(&header, sizeof(header)).ok());
  ASSERT_EQ(header.type, FrameType::kMessage);
  actors::ProtocolMessage received;
  ASSERT_TRUE(pair.receiver.ReceiveAll(&received, sizeof(received)).ok());
  EXPECT_EQ(received.register_id, 9);
  const FrameHeader next = ReadFill(&pair.receiver, &payload);
  EXPECT_EQ(next.register_id, 8);
  EXPECT_EQ(payload, second);
  std::future<Status> first_future = first_done.get_future();
  std::future<Status> second_future = second_done.get_future();
  ASSERT_EQ(first_future.wait_for(10s), std::future_status::ready);
  ASSERT_EQ(second_future.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(first_future.get().ok());
  EXPECT_TRUE(second_future.get().ok());
}

TEST(OutboundStreamTest, AFillInFlightFailsWhenTheStreamIsDestroyed) {
  SocketPair pair = Connect();
  auto stream = std::make_unique<OutboundStream>(std::move(pair.sender), "peer", 1 << 20,
                                                 [](const Status&) {});
  const std::vector<char> bytes(64 << 20, 'e');  // Never read: the writer blocks on it.
  std::promise<Status> done;
  stream->SendBytes(FillHeader(6, static_cast<int64_t>(bytes.size())), bytes.data(),
                    [&](Status status) { done.set_value(std::move(status)); });
  FrameHeader header;
  ASSERT_TRUE(pair.receiver.ReceiveAll(&header, sizeof(header)).ok());  // It has begun.
  const auto began = std::chrono::steady_clock::now();
  stream.reset();  // Shuts the socket down under the blocked writer and joins it.
  EXPECT_LT(std::chrono::steady_clock::now() - began, 5s);
  std::future<Status> future = done.get_future();
  ASSERT_EQ(future.wait_for(0ms), std::future_status::ready);
  EXPECT_FALSE(future.get().ok());
}

}  // namespace
}  // namespace net
}  // namespace runtime
}  // namespace softwire
