// OutboundStream: one TCP connection from this process to a peer process's data plane, with the
// thread that writes it. Messages go out in the order they were queued, and fills in theirs; a
// message queued while fills wait is written before the fills not yet begun. That keeps the
// protocol's order, since a message never announces a fill still queued: SendBytes's `done`
// runs once the bytes are handed to the kernel's socket (or the ring), and only after it does
// the send actor queue its Ready. So one send's Ready (or a recv's Release) does not wait
// behind megabytes of other sends' fills queued after its own.
//
// Messages are batched: every message queued while a write was in progress goes out in one
// sendmsg. Bytes are written straight from the slot (no copy), in chunks of `chunk_bytes` per
// system call, by the writer thread, so the caller (a send's firing on its device's strand)
// returns at once and the device runs other kernels meanwhile. A fill of at most
// `inline_bytes` that finds nothing queued and the socket idle is written on the calling thread
// instead (tens of microseconds), sparing two thread hand-offs, which bound small fills' rate.
// Likewise a message finds the stream idle: it is written at once without waiting
// (MSG_DONTWAIT; what does not fit is left to the writer, first in the queue). Whoever writes
// owns the socket (`writing_`), so frames never interleave. The writer thread is woken only
// when something waits in the queue and nobody writes: a caller that wrote inline wakes it only
// if something was queued meanwhile (before, every inline write woke it for nothing: ~10 of a
// small fill's ~14 futex calls and 2-3 of its context switches).
//
// Cancel: a fill whose `stopping` flag is raised before its header went out completes with
// Cancelled, unwritten; one that has begun is finished (the frame announced its length).
// Failure: when a write fails (the peer is gone), the stream is broken: `on_broken` is called
// once on the writer thread, every queued and later SendBytes completes with an error naming the
// peer, and later messages are dropped.
// Threading: SendMessage and SendBytes from any thread; SendMessage never blocks, SendBytes may
// write a small fill on the calling thread (see above) but never waits for another writer; the
// destructor stops the writer (failing what is still queued) and joins it. `done` runs on the
// writer thread or on the caller's.
#ifndef SOFTWIRE_RUNTIME_NET_OUTBOUND_STREAM_H_
#define SOFTWIRE_RUNTIME_NET_OUTBOUND_STREAM_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "actors/messages.h"
#include "base/mutex.h"
#include "base/status.h"
#include "runtime/net/frame.h"
#include "runtime/net/shm_ring.h"
#include "runtime/net/socket.h"

namespace softwire {
namespace runtime {
namespace net {

class OutboundStream {
 public:
  // `socket` is connected; its hello was sent. `peer`: the peer's address, for errors. `ring`:
  // the same-host ring the hello offered (null: bytes go on the socket).
  // `inline_bytes`: the largest fill written on the calling thread (see above).
  OutboundStream(Socket socket, std::string peer, int64_t chunk_bytes,
                 std::function<void(const Status&)> on_broken,
                 std::unique_ptr<ShmRing> ring = nullptr, int64_t inline_bytes = kInlineBytes);
  ~OutboundStream();
  OutboundStream(const OutboundStream&) = delete;
  OutboundStream& operator=(const OutboundStream&) = delete;

  void SendMessage(const actors::ProtocolMessage& message);
  // The default for `inline_bytes`: 256 KiB take 50-150 us on loopback TCP here.
  static constexpr int64_t kInlineBytes = int64_t{256} << 10;

  // `header` describes the fill (type kWireBytes, job, register, slot, payload_bytes); `data`
  // is borrowed until `done` ran. `stopping` (may be null; borrowed until `done` ran): the
  // job's stop flag (see Cancel above).
  void SendBytes(const FrameHeader& header, const char* data, std::function<void(Status)> done,
                 const std::atomic<bool>* stopping = nullptr);

  bool broken() const { return broken_.load(); }
  const std::string& peer() const { return peer_; }

 private:
  struct Item {
    FrameHeader header;
    actors::ProtocolMessage message;  // kMessage.
    const char* data = nullptr;       // kWireBytes.
    int64_t sent = 0;                 // kMessage: bytes of it already written (inline, partly).
    std::function<void(Status)> done;
    const std::atomic<bool>* stopping = nullptr;  // kWireBytes: its job's stop flag, or null.
  };

  // Wakes the writer thread when there is work for it and nobody is writing.
  void WakeWriterIfIdle() REQUIRES(mutex_);
  void WriteLoop();
  // Writes one fill (or completes it Cancelled, or with the broken status) and calls its done.
  void WriteFill(Item& fill);
  Status WriteMessages(std::deque<Item>& batch);
  Status WriteBytes(Item& item);
  void Break(const Status& status);

  Socket socket_;
  std::unique_ptr<ShmRing> ring_;
  std::atomic<bool> stop_requested_{false};  // Ends a wait on the ring.
  const std::string peer_;
  const int64_t chunk_bytes_;
  const int64_t inline_bytes_;
  const std::function<void(const Status&)> on_broken_;
  Mutex mutex_;
  CondVar changed_;
  // Queued, each in order; messages go out before fills not yet begun (see the file comment).
  std::deque<Item> messages_ GUARDED_BY(mutex_);
  std::deque<Item> fills_ GUARDED_BY(mutex_);
  bool stopping_ GUARDED_BY(mutex_) = false;
  bool writing_ GUARDED_BY(mutex_) = false;  // A thread is writing to the socket.
  std::atomic<bool> broken_{false};
  Status broken_status_;  // Set once, before broken_, by the writer.
  std::thread writer_;
};

}  // namespace net
}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_NET_OUTBOUND_STREAM_H_
