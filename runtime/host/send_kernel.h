// SendKernel: the kernel of a send actor (insert_send_recv) on a device with memory. A firing
// hands its input slot's bytes to the hosted plan's current WireTransport, addressed to the slot
// of the wire register that the firing fills on the receiving node, and ends once the transport
// reports them delivered in order (wire_transport.h), so the Ready that the actor sends after
// the firing never overtakes the bytes.
//
// It finishes off its queue (Kernel::finishes_off_queue): a queue that can let go (the cpu
// strand) calls Start, which hands the bytes over and returns, and the transport's completion
// ends the firing, so the device's other kernels run while the bytes travel (the data plane's
// writer thread writes them). The input slot stays held until then: the actor releases it only
// after the firing completed. Run (for queues that run every kernel to its end) waits for the
// completion instead.
//
// Threading: Start or Run on the send's queue, one firing at a time (Kernel's contract); the
// transport pointer is read at every firing, so a data plane may attach between runs. The
// completion may come on any thread.
// Ownership: borrows the transport slot and the job's stop flag, which the hosted plan and the
// execution own and which outlive every firing (the run waits for every deferred launch).
// Failure: the firing fails with the transport's error (naming the node), or Cancelled when the
// job stopped before the transport began writing the bytes.
#ifndef SOFTWIRE_RUNTIME_HOST_SEND_KERNEL_H_
#define SOFTWIRE_RUNTIME_HOST_SEND_KERNEL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "actors/messages.h"
#include "runtime/host/wire_transport.h"
#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {

class SendKernel final : public Kernel {
 public:
  // `node`: where the wire register `wire_register` lies; `bytes`: what one fill carries;
  // `stopping`: the job's stop flag (may be null: never stops).
  SendKernel(actors::JobId job, std::string node, int64_t wire_register, int64_t bytes,
             const std::atomic<WireTransport*>* transport,
             const std::atomic<bool>* stopping = nullptr)
      : job_(job),
        node_(std::move(node)),
        wire_register_(wire_register),
        bytes_(bytes),
        transport_(transport),
        stopping_(stopping) {}

  Status Run(const KernelContext& context) override;
  bool finishes_off_queue() const override { return true; }
  void Start(const KernelContext& context, std::function<void(Status)> done) override;

 private:
  const actors::JobId job_;
  const std::string node_;
  const int64_t wire_register_;
  const int64_t bytes_;
  const std::atomic<WireTransport*>* const transport_;
  const std::atomic<bool>* const stopping_;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_SEND_KERNEL_H_
