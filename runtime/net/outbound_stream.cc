#include "runtime/net/outbound_stream.h"

#include <sys/uio.h>

#include <algorithm>
#include <vector>

namespace softwire {
namespace runtime {
namespace net {

OutboundStream::OutboundStream(Socket socket, std::string peer, int64_t chunk_bytes,
                               std::function<void(const Status&)> on_broken,
                               std::unique_ptr<ShmRing> ring, int64_t inline_bytes)
    : socket_(std::move(socket)),
      ring_(std::move(ring)),
      peer_(std::move(peer)),
      chunk_bytes_(std::max<int64_t>(chunk_bytes, 4096)),
      inline_bytes_(inline_bytes),
      on_broken_(std::move(on_broken)),
      writer_([this] { WriteLoop(); }) {}

OutboundStream::~OutboundStream() {
  stop_requested_.store(true);
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
  {
    MutexLock lock(&mutex_);
    if (!messages_.empty() || writing_ || stopping_) {
      messages_.push_back(std::move(item));
      WakeWriterIfIdle();
      return;
    }
    writing_ = true;  // Idle: try it now on this thread, without waiting for room.
  }
  const iovec parts[2] = {{&item.header, sizeof(FrameHeader)},
                          {&item.message, sizeof(actors::ProtocolMessage)}};
  StatusOr<int64_t> sent = socket_.TrySend(parts, 2);
  if (!sent.ok()) Break(sent.status());
  MutexLock lock(&mutex_);
  if (sent.ok() && *sent < static_cast<int64_t>(sizeof(FrameHeader) + sizeof(item.message))) {
    item.sent = *sent;
    messages_.push_front(std::move(item));  // Before anything queued meanwhile.
  }
  writing_ = false;
  WakeWriterIfIdle();
}

namespace {

bool Stopping(const std::atomic<bool>* stopping) {
  return stopping != nullptr && stopping->load(std::memory_order_relaxed);
}

}  // namespace

void OutboundStream::SendBytes(const FrameHeader& header, const char* data,
                               std::function<void(Status)> done,
                               const std::atomic<bool>* stopping) {
  if (broken_.load()) {
    done(broken_status_);
    return;
  }
  if (Stopping(stopping)) {
    done(CancelledError("the job is stopping"));
    return;
  }
  Item item;
  item.header = header;
  item.header.type = FrameType::kWireBytes;
  item.data = data;
  item.done = std::move(done);
  item.stopping = stopping;
  {
    MutexLock lock(&mutex_);
    if (!messages_.empty() || !fills_.empty() || writing_ || stopping_ ||
        header.payload_bytes > inline_bytes_) {
      fills_.push_back(std::move(item));
      WakeWriterIfIdle();
      return;
    }
    writing_ = true;  // Nothing queued, the socket idle: write on this thread, no hand-off.
  }
  Status status = WriteBytes(item);
  if (!status.ok()) Break(status);
  {
    MutexLock lock(&mutex_);
    writing_ = false;
    WakeWriterIfIdle();  // Messages queued meanwhile go out after these bytes.
  }
  item.done(broken_.load() ? broken_status_ : Status::Ok());
}

// Only the writer thread waits on `changed_`, and only for work while nobody writes: a caller
// that wrote inline and left nothing queued does not wake it (a wake-up and a context switch
// per message or fill, twice per small fill, for nothing), and one that queues while another
// thread writes leaves the wake-up to that thread, which finds the queue when it is done.
void OutboundStream::WakeWriterIfIdle() {
  if (writing_) return;
  if (messages_.empty() && fills_.empty() && !stopping_) return;
  changed_.NotifyOne();
}

void OutboundStream::WriteLoop() {
  std::deque<Item> messages;
  Item fill;
  while (true) {
    bool have_fill = false;
    {
      MutexLock lock(&mutex_);
      while ((messages_.empty() && fills_.empty()) || writing_) {
        if (stopping_ && !writing_) break;
        changed_.Wait(&lock);
      }
      if (messages_.empty() && fills_.empty()) return;  // Stopping, nothing left.
      if (stopping_ && !broken_.load()) {  // Fail what is left, without blaming the peer.
        broken_status_ = UnavailableError("the data plane to " + peer_ + " is shutting down");
        broken_.store(true);
      }
      // Messages first: each was queued after the fills it announces were written (a send's
      // Ready follows its completion), so it may pass fills not yet begun.
      if (!messages_.empty()) {
        messages.swap(messages_);
      } else {
        fill = std::move(fills_.front());
        fills_.pop_front();
        have_fill = true;
      }
      writing_ = true;
    }
    while (!messages.empty()) {
      if (broken_.load()) {
        messages.clear();  // The peer is gone; its jobs fail.
        break;
      }
      Status status = WriteMessages(messages);  // Removes the messages it wrote.
      if (!status.ok()) Break(status);
    }
    if (have_fill) WriteFill(fill);
    MutexLock lock(&mutex_);
    writing_ = false;  // This thread looks at the queues again next; nobody else waits.
  }
}

void OutboundStream::WriteFill(Item& fill) {
  if (broken_.load()) {
    fill.done(broken_status_);
  } else if (Stopping(fill.stopping)) {  // Not begun: nothing of it is on the stream.
    fill.done(CancelledError("the job is stopping"));
  } else {
    Status status = WriteBytes(fill);
    if (!status.ok()) Break(status);
    fill.done(broken_.load() ? broken_status_ : Status::Ok());
  }
  fill.done = nullptr;
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
  // The first may have been partly written inline (SendMessage): skip what went out.
  size_t first = 0;
  for (int64_t skip = batch[0].sent; skip > 0; ++first) {
    const int64_t part = static_cast<int64_t>(parts[first].iov_len);
    if (skip < part) {
      parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + skip;
      parts[first].iov_len -= static_cast<size_t>(skip);
      break;
    }
    skip -= part;
  }
  Status status = socket_.SendAll(parts.data() + first, static_cast<int>(parts.size() - first));
  batch.erase(batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(count));
  return status;
}

Status OutboundStream::WriteBytes(Item& item) {
  if (ring_ != nullptr) {  // The header on the socket, the bytes through the ring.
    item.header.type = FrameType::kShmBytes;
    const auto keep_waiting = [this] { return !stop_requested_.load() && !socket_.PeerClosed(); };
    // The first cell before the header: the reader, woken by the header, finds a small fill's
    // bytes there already instead of waiting on the ring for them (a sleep and a wake-up).
    // Later cells follow the header, so a large fill's two copies still overlap.
    const int64_t total = item.header.payload_bytes;
    const int64_t first = std::min(total, ring_->cell_bytes());
    SOFTWIRE_RETURN_IF_ERROR(ring_->Write(item.data, first, keep_waiting));
    SOFTWIRE_RETURN_IF_ERROR(socket_.SendAll(&item.header, sizeof(FrameHeader)));
    if (first == total) return Status::Ok();
    return ring_->Write(item.data + first, total - first, keep_waiting);
  }
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
  if (broken_.load()) return;  // Only the thread that owns the socket (writing_) gets here.
  broken_status_ = UnavailableError("connection to " + peer_ + " broke: " + status.message());
  broken_.store(true);
  on_broken_(broken_status_);
}

}  // namespace net
}  // namespace runtime
}  // namespace softwire
