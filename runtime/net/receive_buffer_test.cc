// ReceiveBuffer over a connected pair of sockets: frames that follow one another come in with
// one receive and are handed out in order, byte for byte; a large payload arrives whole; the
// end of the stream is an error.
#include "runtime/net/receive_buffer.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace softwire {
namespace runtime {
namespace net {
namespace {

class ReceiveBufferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    writer_ = Socket(fds[0]);
    reader_ = Socket(fds[1]);
  }
  Socket writer_;
  Socket reader_;
};

TEST_F(ReceiveBufferTest, SmallFramesComeInTogetherAndInOrder) {
  std::string sent;
  for (int frame = 0; frame < 20; ++frame) sent += "frame" + std::to_string(frame) + ";";
  ASSERT_TRUE(writer_.SendAll(sent.data(), static_cast<int64_t>(sent.size())).ok());
  ReceiveBuffer buffer(&reader_);
  std::string first(7, '\0');  // "frame0;"
  ASSERT_TRUE(buffer.ReceiveAll(first.data(), 7).ok());
  EXPECT_EQ(first, "frame0;");
  // The other frames came in with the first receive: no further system call needed.
  EXPECT_EQ(buffer.buffered(), static_cast<int64_t>(sent.size()) - 7);
  std::string rest(sent.size() - 7, '\0');
  ASSERT_TRUE(buffer.ReceiveAll(rest.data(), static_cast<int64_t>(rest.size())).ok());
  EXPECT_EQ(first + rest, sent);
}

TEST_F(ReceiveBufferTest, ALargePayloadAfterAHeaderArrivesWhole) {
  std::vector<char> payload(1 << 20);
  std::iota(payload.begin(), payload.end(), 0);
  const std::string header = "header";
  std::thread writer([&] {
    ASSERT_TRUE(writer_.SendAll(header.data(), static_cast<int64_t>(header.size())).ok());
    ASSERT_TRUE(writer_.SendAll(payload.data(), static_cast<int64_t>(payload.size())).ok());
  });
  ReceiveBuffer buffer(&reader_);
  std::string got_header(header.size(), '\0');
  ASSERT_TRUE(buffer.ReceiveAll(got_header.data(), static_cast<int64_t>(header.size())).ok());
  std::vector<char> got(payload.size());
  ASSERT_TRUE(buffer.ReceiveAll(got.data(), static_cast<int64_t>(got.size())).ok());
  writer.join();
  EXPECT_EQ(got_header, header);
  EXPECT_EQ(got, payload);
  EXPECT_EQ(buffer.buffered(), 0);
}

TEST_F(ReceiveBufferTest, FramesThatFollowALargePayloadComeInWithItsLastBytes) {
  std::vector<char> payload(64 << 10);
  std::iota(payload.begin(), payload.end(), 0);
  const std::string header = "header";
  const std::string after = "ready;release;";
  ASSERT_TRUE(writer_.SendAll(header.data(), static_cast<int64_t>(header.size())).ok());
  ReceiveBuffer buffer(&reader_);
  std::string got_header(header.size(), '\0');
  ASSERT_TRUE(buffer.ReceiveAll(got_header.data(), static_cast<int64_t>(header.size())).ok());
  // Everything is sent before the payload is read (a socketpair holds ~200 KiB).
  ASSERT_TRUE(writer_.SendAll(payload.data(), static_cast<int64_t>(payload.size())).ok());
  ASSERT_TRUE(writer_.SendAll(after.data(), static_cast<int64_t>(after.size())).ok());
  std::vector<char> got(payload.size());
  ASSERT_TRUE(buffer.ReceiveAll(got.data(), static_cast<int64_t>(got.size())).ok());
  EXPECT_EQ(got_header, header);
  EXPECT_EQ(got, payload);
  // What followed the payload came in with it: buffered, no further system call needed.
  EXPECT_EQ(buffer.buffered(), static_cast<int64_t>(after.size()));
  std::string got_after(after.size(), '\0');
  ASSERT_TRUE(buffer.ReceiveAll(got_after.data(), static_cast<int64_t>(after.size())).ok());
  EXPECT_EQ(got_after, after);
}

TEST_F(ReceiveBufferTest, TheEndOfTheStreamBeforeAllBytesIsAnError) {
  ASSERT_TRUE(writer_.SendAll("abc", 3).ok());
  writer_.Close();
  ReceiveBuffer buffer(&reader_);
  char got[8];
  const Status status = buffer.ReceiveAll(got, sizeof(got));
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status;
}

}  // namespace
}  // namespace net
}  // namespace runtime
}  // namespace softwire
