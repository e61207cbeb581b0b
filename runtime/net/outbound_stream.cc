#include "runtime/net/outbound_stream.h"

#include <sys/uio.h>

#include <algorithm>
#include <vector>

namespace softwire {
namespace runtime {
namespace net {

OutboundStream::OutboundStream(Socket socket, std::string peer, int64_t chunk_bytes,
                               std::function<void(const Status&)> on_broken)
    : socket_(std::move(socket)),
      peer_(std::move(peer)),
      chunk_bytes_(std::max<int64_t>(chunk_bytes, 4096)),
      on_broken_(std::move(on_broken)),
      writer_([this] { WriteLoop(); }) {}

OutboundStream::~OutboundStream() {
  {
    MutexLock lock(&mutex_);
    stopping_ = true;
    changed_.NotifyAll();
  }
  socket_.Shutdown();  // Wakes a writer blocked on a full socket.
  writer_.join();
  socket_.Close();
}

void OutboundStream::SendMessage(const actors::ProtocolMessage& message) {
  if (broken_.load(std::memory_order_relaxed)) return;  // The peer is gone; its job fails.
  Item item;
  item.header.type = FrameType::kMessage;
  item.header.job = message.job;
  item.header.payload_bytes = sizeof(actors::ProtocolMessage);
  item.message = message;
  MutexLock lock(&mutex_);
  queue_.push_back(std::move(item));
  changed_.NotifyOne();
}

void OutboundStream::SendBytes(const FrameHeader& header, const char* data,
                               std::function<void(Status)> done) {
  if (broken_.load()) {
    done(broken_status_);
    return;
  }
  Item item;
  item.header = header;
  item.header.type = FrameType::kWireBytes;
  item.data = data;
  item.done = std::move(done);
  MutexLock lock(&mutex_);
  queue_.push_back(std::move(item));
  changed_.NotifyOne();
}

void OutboundStream::WriteLoop() {
  std::deque<Item> batch;
  while (true) {
    {
      MutexLock lock(&mutex_);
      while (queue_.empty() && !stopping_) changed_.Wait(&lock);
      if (queue_.empty()) return;          // Stopping, nothing left.
      if (stopping_ && !broken_.load()) {  // Fail what is left, without blaming the peer.
        broken_status_ = UnavailableError("the data plane to " + peer_ + " is shutting down");
        broken_.store(true);
      }
      batch.swap(queue_);
    }
    while (!batch.empty()) {
      if (broken_.load()) {
        if (batch.front().done) batch.front().done(broken_status_);
        batch.pop_front();
        continue;
      }
      if (batch.front().header.type == FrameType::kMessage) {
        Status status = WriteMessages(batch);  // Removes the messages it wrote.
        if (!status.ok()) Break(status);
        continue;
      }
      Status status = WriteBytes(batch.front());
      if (!status.ok()) Break(status);
      batch.front().done(broken_.load() ? broken_status_ : Status::Ok());
      batch.pop_front();
    }
  }
}

// Writes the messages at the front of `batch` in one call and removes them.
Status OutboundStream::WriteMessages(std::deque<Item>& batch) {
  constexpr size_t kMaxBatch = 64;  // 128 iovecs, well under IOV_MAX.
  std::vector<iovec> parts;
  size_t count = 0;
  while (count < batch.size() && count < kMaxBatch &&
         batch[count].header.type == FrameType::kMessage) {
    parts.push_back({&batch[count].header, sizeof(FrameHeader)});
    parts.push_back({&batch[count].message, sizeof(actors::ProtocolMessage)});
    ++count;
  }
  Status status = socket_.SendAll(parts.data(), static_cast<int>(parts.size()));
  batch.erase(batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(count));
  return status;
}

Status OutboundStream::WriteBytes(Item& item) {
  iovec parts[2] = {{&item.header, sizeof(FrameHeader)}, {nullptr, 0}};
  int64_t sent = 0;
  const int64_t total = item.header.payload_bytes;
  // The header goes with the first chunk; each later chunk is one call.
  bool first = true;
  do {
    const int64_t chunk = std::min(chunk_bytes_, total - sent);
    parts[1] = {const_cast<char*>(item.data) + sent, static_cast<size_t>(chunk)};
    Status status = first ? socket_.SendAll(parts, 2) : socket_.SendAll(&parts[1], 1);
    if (!status.ok()) return status;
    first = false;
    sent += chunk;
  } while (sent < total);
  return Status::Ok();
}

void OutboundStream::Break(const Status& status) {
  broken_status_ = UnavailableError("connection to " + peer_ + " broke: " + status.message());
  broken_.store(true);
  on_broken_(broken_status_);
}

}  // namespace net
}  // namespace runtime
}  // namespace softwire
