// WireTransport: how a send actor's bytes reach the wire register of its recv on another node
// (docs/DATA_PLANE.md). The compiler puts the wire register on the receiving device
// (insert_send_recv); a send firing hands the transport its input slot's bytes and which slot of
// the wire register they fill, and the transport lands them there.
//
// Two implementations: in one process, InProcessWireTransport copies into the slot where the
// peer's hosted plan keeps it; between processes, the data plane (runtime/net/) writes them to
// the peer process's connection, whose reader copies them into the slot.
//
// Ordering contract: once `done` was called with OK, a protocol message that the caller sends
// afterwards to an actor of `node` (the send's Ready, through the PeerRouter) is delivered only
// after the bytes are in the slot. `data` is borrowed until `done` was called.
//
// Threading: Write from any thread (a device queue's); implementations are thread-safe.
// `done` may be called on the calling thread, before Write returns, or on another thread; it
// must not block. Write should not hold the calling thread for long: it is the device's strand
// (send_kernel.h), which runs the device's other kernels once Write returned; a transport
// between processes hands large fills to a thread of its own.
// Cancel: a transport that has not begun writing a fill when `stopping` is raised completes it
// with Cancelled instead of writing it; one that has begun finishes it (or fails it with its
// connection), so `done` always comes. Failure: `done` gets an error naming the node (no route to
// it, its connection broke); the send's firing then fails the run.
#ifndef SOFTWIRE_RUNTIME_HOST_WIRE_TRANSPORT_H_
#define SOFTWIRE_RUNTIME_HOST_WIRE_TRANSPORT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "actors/messages.h"
#include "base/status.h"
#include "runtime/host/actor_binding.h"

namespace softwire {
namespace runtime {

// One transfer: the bytes of one fill of a wire register.
struct WireWrite {
  actors::JobId job = 0;
  std::string node;  // Where the wire register lies (its device's node).
  int64_t register_id = -1;
  int32_t slot = 0;
  const char* data = nullptr;
  int64_t bytes = 0;
  // The job's stop flag (may be null): once raised, a fill not yet begun is not written.
  const std::atomic<bool>* stopping = nullptr;
};

class WireTransport {
 public:
  virtual ~WireTransport() = default;
  virtual void Write(const WireWrite& write, std::function<void(Status)> done) = 0;
};

// In one address space: memcpy into the slot of `slots` (the hosted plan's RegisterSlots, which
// Bind filled with the peers' slots). Completes on the calling thread.
class InProcessWireTransport final : public WireTransport {
 public:
  explicit InProcessWireTransport(const RegisterSlots* slots) : slots_(slots) {}
  void Write(const WireWrite& write, std::function<void(Status)> done) override;

 private:
  const RegisterSlots* const slots_;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_WIRE_TRANSPORT_H_
