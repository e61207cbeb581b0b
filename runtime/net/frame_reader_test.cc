// The frame reader on bytes in memory: what a peer may send and what ends its connection.
#include "runtime/net/frame_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/net/memory_frame_source.h"
#include "runtime/net/shm_ring.h"

namespace softwire {
namespace runtime {
namespace net {
namespace {

std::string Bytes(const void* data, size_t size) {
  return std::string(static_cast<const char*>(data), size);
}

std::string HelloFrame(const std::string& payload, uint32_t version = kFrameVersion) {
  FrameHeader header;
  header.version = version;
  header.payload_bytes = static_cast<int64_t>(payload.size());
  return Bytes(&header, sizeof(header)) + payload;
}

std::string Frame(FrameType type, const std::string& payload, int64_t register_id = -1,
                  int32_t slot = 0) {
  FrameHeader header;
  header.type = type;
  header.job = 7;
  header.register_id = register_id;
  header.slot = slot;
  header.payload_bytes = static_cast<int64_t>(payload.size());
  return Bytes(&header, sizeof(header)) + payload;
}

// A share of one register of two 8-byte slots; records what arrives.
class Share final : public FrameHandler {
 public:
  Share() {
    plan_.add_register_def()->set_bytes_per_slot(8);
    slots_ = {{first_, second_}};
  }
  void OnMessage(const FrameHeader&, const actors::ProtocolMessage& message) override {
    messages.push_back(message);
  }
  char* FillDestination(const FrameHeader& header) override {
    Status fits = CheckFill(header, slots_, plan_);
    if (!fits.ok()) {
      refused.push_back(fits.message());
      return nullptr;
    }
    return slots_[static_cast<size_t>(header.register_id)][static_cast<size_t>(header.slot)];
  }
  void OnDropped(const FrameHeader&) override { ++dropped; }

  // Reads hello and frames as the data plane does; why it stopped.
  Status Read(MemoryFrameSource& source) {
    Hello hello;
    SOFTWIRE_RETURN_IF_ERROR(ReadHello(source, &hello));
    for (;;) {
      FrameHeader header;
      SOFTWIRE_RETURN_IF_ERROR(ReadFrameHeader(source, &header));
      SOFTWIRE_RETURN_IF_ERROR(DeliverFrame(header, source, !hello.ring_name.empty(), *this));
    }
  }

  std::string slot(int index) const { return std::string(index == 0 ? first_ : second_, 8); }

  std::vector<actors::ProtocolMessage> messages;
  std::vector<std::string> refused;
  int dropped = 0;

 private:
  proto::Plan plan_;
  char first_[8] = {};
  char second_[8] = {};
  std::vector<std::vector<char*>> slots_;
};

TEST(FrameReader, ReadsAHelloWithAndWithoutARing) {
  MemoryFrameSource plain(HelloFrame("127.0.0.1:5"));
  Hello hello;
  ASSERT_TRUE(ReadHello(plain, &hello).ok());
  EXPECT_EQ(hello.peer_address, "127.0.0.1:5");
  EXPECT_EQ(hello.ring_name, "");
  MemoryFrameSource ringed(HelloFrame("127.0.0.1:5\n/softwire-dp-12-3"));
  ASSERT_TRUE(ReadHello(ringed, &hello).ok());
  EXPECT_EQ(hello.peer_address, "127.0.0.1:5");
  EXPECT_EQ(hello.ring_name, "/softwire-dp-12-3");
}

TEST(FrameReader, RefusesARingNameNotMadeByADataPlane) {
  for (const std::string name : {"/other-app-segment", "/softwire-dp-1", "/softwire-dp-1-x",
                                 "/softwire-dp-1-2/../x", "softwire-dp-1-2", ""}) {
    MemoryFrameSource source(HelloFrame("127.0.0.1:5\n" + name));
    Hello hello;
    Status status = ReadHello(source, &hello);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << name;
    EXPECT_NE(status.message().find("'" + name + "'"), std::string::npos) << status;
    EXPECT_FALSE(IsRingName(name)) << name;
  }
  EXPECT_TRUE(IsRingName("/softwire-dp-4021-0"));
}

TEST(FrameReader, RefusesAHelloOfAnotherVersionNamingBoth) {
  MemoryFrameSource source(HelloFrame("127.0.0.1:5", kFrameVersion + 1));
  Hello hello;
  Status status = ReadHello(source, &hello);
  EXPECT_NE(status.message().find("version " + std::to_string(kFrameVersion + 1) +
                                  ", this process speaks " + std::to_string(kFrameVersion)),
            std::string::npos)
      << status;
}

TEST(FrameReader, RefusesAHelloTooLargeOrNotAHello) {
  MemoryFrameSource large(HelloFrame(std::string(kMaxHelloBytes + 1, 'a')));
  Hello hello;
  EXPECT_EQ(ReadHello(large, &hello).message(), "not a softwire data plane");
  MemoryFrameSource message(Frame(FrameType::kMessage, std::string(48, '\0')));
  EXPECT_EQ(ReadHello(message, &hello).message(), "not a softwire data plane");
}

TEST(FrameReader, DeliversMessagesAndFillsAndDropsWhatDoesNotFit) {
  actors::ProtocolMessage message;
  message.job = 7;
  message.to = 3;
  const std::string stream =
      HelloFrame("127.0.0.1:5") + Frame(FrameType::kMessage, Bytes(&message, sizeof(message))) +
      Frame(FrameType::kWireBytes, "abcdefgh", /*register_id=*/0, /*slot=*/1) +
      Frame(FrameType::kWireBytes, "too many bytes", 0, 0) +  // 14 > 8: dropped, skipped.
      Frame(FrameType::kWireBytes, "x", 1, 0) +               // No register 1.
      Frame(FrameType::kWireBytes, "x", 0, 2) +               // No slot 2.
      Frame(FrameType::kWireBytes, "x", -1, 0) + Frame(FrameType::kWireBytes, "x", 0, -1) +
      Frame(static_cast<FrameType>(99), "ignored payload") +  // Unknown: dropped.
      Frame(FrameType::kWireBytes, "12345678", 0, 0);         // Still in step.
  MemoryFrameSource source(stream);
  Share share;
  Status ended = share.Read(source);
  EXPECT_EQ(ended.message(), "the peer closed");
  ASSERT_EQ(share.messages.size(), 1u);
  EXPECT_EQ(share.messages[0].to, 3);
  EXPECT_EQ(share.slot(1), "abcdefgh");
  EXPECT_EQ(share.slot(0), "12345678");
  ASSERT_EQ(share.refused.size(), 5u);
  EXPECT_EQ(share.refused[0], "bytes for register 0 slot 0 (14 bytes) do not fit this share");
  EXPECT_EQ(share.dropped, 1);
  EXPECT_EQ(source.socket_left(), 0);
}

TEST(FrameReader, EndsTheConnectionOnAGarbledFrame) {
  const std::string hello = HelloFrame("127.0.0.1:5");
  Share share;
  MemoryFrameSource short_message(hello + Frame(FrameType::kMessage, "only 12 bytes"));
  EXPECT_EQ(share.Read(short_message).message(), "garbled message");
  FrameHeader negative;
  negative.type = FrameType::kWireBytes;
  negative.payload_bytes = -5;
  MemoryFrameSource negative_size(hello + Bytes(&negative, sizeof(negative)));
  EXPECT_EQ(share.Read(negative_size).message(), "garbled frame");
  FrameHeader alien = negative;
  alien.magic = 0x12345678;
  alien.payload_bytes = 0;
  MemoryFrameSource bad_magic(hello + Bytes(&alien, sizeof(alien)));
  EXPECT_EQ(share.Read(bad_magic).message(), "garbled frame");
  FrameHeader ring_fill;
  ring_fill.type = FrameType::kShmBytes;
  ring_fill.payload_bytes = 4;
  MemoryFrameSource no_ring(hello + Bytes(&ring_fill, sizeof(ring_fill)));
  EXPECT_EQ(share.Read(no_ring).message(), "ring bytes on a connection without a ring");
}

TEST(FrameReader, ReadsRingFillsFromTheRing) {
  FrameHeader ring_fill;
  ring_fill.type = FrameType::kShmBytes;
  ring_fill.register_id = 0;
  ring_fill.slot = 0;
  ring_fill.payload_bytes = 8;
  MemoryFrameSource source(
      HelloFrame("127.0.0.1:5\n/softwire-dp-1-0") + Bytes(&ring_fill, sizeof(ring_fill)),
      "ringbyte");
  Share share;
  EXPECT_EQ(share.Read(source).message(), "the peer closed");
  EXPECT_EQ(share.slot(0), "ringbyte");
}

}  // namespace
}  // namespace net
}  // namespace runtime
}  // namespace softwire
