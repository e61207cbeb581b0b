// SendKernel: the kernel of a send actor (insert_send_recv) on a device with memory. A firing
// hands its input slot's bytes to the hosted plan's current WireTransport, addressed to the slot
// of the wire register that the firing fills on the receiving node, and returns once the
// transport reports them delivered in order (wire_transport.h), so the Ready that the actor
// sends after the firing never overtakes the bytes. The send runs on its own queue (the copy
// queue), which is what waits meanwhile.
//
// Threading: Run on the send's queue, one firing at a time (Kernel's contract); the transport
// pointer is read at every firing, so a data plane may attach between runs.
// Ownership: borrows the transport slot, which the hosted plan owns and which outlives the
// kernel. Failure: Run returns the transport's error (naming the node).
#ifndef SOFTWIRE_RUNTIME_HOST_SEND_KERNEL_H_
#define SOFTWIRE_RUNTIME_HOST_SEND_KERNEL_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "actors/messages.h"
#include "runtime/host/wire_transport.h"
#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {

class SendKernel final : public Kernel {
 public:
  // `node`: where the wire register `wire_register` lies; `bytes`: what one fill carries.
  SendKernel(actors::JobId job, std::string node, int64_t wire_register, int64_t bytes,
             const std::atomic<WireTransport*>* transport)
      : job_(job),
        node_(std::move(node)),
        wire_register_(wire_register),
        bytes_(bytes),
        transport_(transport) {}

  Status Run(const KernelContext& context) override;

 private:
  const actors::JobId job_;
  const std::string node_;
  const int64_t wire_register_;
  const int64_t bytes_;
  const std::atomic<WireTransport*>* const transport_;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_SEND_KERNEL_H_
