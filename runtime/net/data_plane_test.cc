// DataPlane on its own, with a raw socket as the peer: addresses, frames of jobs nobody
// attached (dropped and counted, their bytes skipped), a peer of another protocol version
// (refused), and a shutdown that leaves no thread behind while peers are still connected.
#include "runtime/net/data_plane.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "runtime/net/frame.h"
#include "runtime/net/socket.h"

namespace softwire {
namespace runtime {
namespace net {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<DataPlane> NewPlane() {
  StatusOr<std::unique_ptr<DataPlane>> plane = DataPlane::Create(nullptr, {});
  EXPECT_TRUE(plane.ok()) << plane.status();
  return plane.ok() ? std::move(plane).value() : nullptr;
}

// A connection to `plane` that said hello as "127.0.0.1:1" (speaking `version`), with
// `payload` in place of the address when given.
Socket ConnectAsPeer(const DataPlane& plane, uint32_t version = kFrameVersion,
                     const std::string& payload = "") {
  StatusOr<Socket> socket = Socket::Connect(plane.address(), 5000ms);
  EXPECT_TRUE(socket.ok()) << socket.status();
  const std::string me = payload.empty() ? "127.0.0.1:1" : payload;
  FrameHeader hello;
  hello.version = version;
  hello.payload_bytes = static_cast<int64_t>(me.size());
  EXPECT_TRUE(socket->SendAll(&hello, sizeof(hello)).ok());
  EXPECT_TRUE(socket->SendAll(me.data(), hello.payload_bytes).ok());
  return std::move(socket).value();
}

bool AwaitDropped(const DataPlane& plane, int64_t count) {
  for (int i = 0; i < 500 && plane.dropped_frames() < count; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  return plane.dropped_frames() == count;
}

TEST(DataPlane, ListensOnAFreeLoopbackPortByDefault) {
  std::unique_ptr<DataPlane> plane = NewPlane();
  ASSERT_NE(plane, nullptr);
  EXPECT_EQ(plane->address().rfind("127.0.0.1:", 0), 0u) << plane->address();
  EXPECT_NE(plane->address(), "127.0.0.1:0");
}

TEST(DataPlane, RefusesAnAddressThatIsNotHostColonPortNamingIt) {
  DataPlaneOptions options;
  options.listen_address = "loopback";
  StatusOr<std::unique_ptr<DataPlane>> plane = DataPlane::Create(nullptr, options);
  ASSERT_FALSE(plane.ok());
  EXPECT_EQ(plane.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(plane.status().message().find("'loopback'"), std::string::npos) << plane.status();
}

TEST(DataPlane, DropsAndCountsFramesOfJobsNobodyAttachedAndSkipsTheirBytes) {
  std::unique_ptr<DataPlane> plane = NewPlane();
  ASSERT_NE(plane, nullptr);
  Socket peer = ConnectAsPeer(*plane);
  actors::ProtocolMessage message;
  message.job = 99;
  FrameHeader header;
  header.type = FrameType::kMessage;
  header.job = 99;
  header.payload_bytes = sizeof(message);
  ASSERT_TRUE(peer.SendAll(&header, sizeof(header)).ok());
  ASSERT_TRUE(peer.SendAll(&message, sizeof(message)).ok());
  const std::vector<char> bytes(3 << 20, 'x');  // Larger than a chunk and a socket buffer.
  header.type = FrameType::kWireBytes;
  header.register_id = 0;
  header.payload_bytes = static_cast<int64_t>(bytes.size());
  ASSERT_TRUE(peer.SendAll(&header, sizeof(header)).ok());
  ASSERT_TRUE(peer.SendAll(bytes.data(), header.payload_bytes).ok());
  // The stream is still in step after the skipped bytes: one more message is read as one.
  header.type = FrameType::kMessage;
  header.payload_bytes = sizeof(message);
  ASSERT_TRUE(peer.SendAll(&header, sizeof(header)).ok());
  ASSERT_TRUE(peer.SendAll(&message, sizeof(message)).ok());
  EXPECT_TRUE(AwaitDropped(*plane, 3)) << plane->dropped_frames();
}

TEST(DataPlane, RefusesAPeerOfAnotherProtocolVersion) {
  std::unique_ptr<DataPlane> plane = NewPlane();
  ASSERT_NE(plane, nullptr);
  Socket peer = ConnectAsPeer(*plane, kFrameVersion + 1);
  char byte = 0;
  EXPECT_FALSE(peer.ReceiveAll(&byte, 1).ok());  // Closed on us.
}

TEST(DataPlane, LeavesAloneASharedMemorySegmentAPeerNamesThatIsNotARing) {
  // A hello may offer a same-host ring by name; a peer naming another program's segment must
  // not make this process open or unlink it (it used to unlink any name it was sent).
  const std::string name = "/softwire-test-not-a-ring-" + std::to_string(getpid());
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  ASSERT_GE(fd, 0) << name;
  close(fd);
  std::unique_ptr<DataPlane> plane = NewPlane();
  ASSERT_NE(plane, nullptr);
  Socket peer = ConnectAsPeer(*plane, kFrameVersion, "127.0.0.1:1\n" + name);
  char byte = 0;
  EXPECT_FALSE(peer.ReceiveAll(&byte, 1).ok());  // Refused: closed on us.
  const int again = shm_open(name.c_str(), O_RDWR, 0);
  EXPECT_GE(again, 0) << name << " was unlinked";
  if (again >= 0) close(again);
  shm_unlink(name.c_str());
}

TEST(DataPlane, ShutsDownWhilePeersAreStillConnected) {
  std::unique_ptr<DataPlane> plane = NewPlane();
  ASSERT_NE(plane, nullptr);
  Socket first = ConnectAsPeer(*plane);
  Socket second = ConnectAsPeer(*plane);
  std::this_thread::sleep_for(20ms);
  const auto began = std::chrono::steady_clock::now();
  plane.reset();  // Joins its accept and reader threads.
  EXPECT_LT(std::chrono::steady_clock::now() - began, 2s);
  char byte = 0;
  EXPECT_FALSE(first.ReceiveAll(&byte, 1).ok());
}

}  // namespace
}  // namespace net
}  // namespace runtime
}  // namespace softwire
