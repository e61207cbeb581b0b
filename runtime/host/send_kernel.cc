#include "runtime/host/send_kernel.h"

#include "base/mutex.h"

namespace softwire {
namespace runtime {
namespace {

// Where the transport's completion meets a firing that waits for it (Run). Lives on the
// firing's stack: the firing returns only after `done` was set, and the callback touches
// nothing after notifying.
struct Completion {
  Mutex mutex;
  CondVar changed;
  bool done GUARDED_BY(mutex) = false;
  Status status GUARDED_BY(mutex);
};

}  // namespace

void SendKernel::Start(const KernelContext& context, std::function<void(Status)> done) {
  WireTransport* transport = transport_->load(std::memory_order_acquire);
  if (transport == nullptr) {
    done(FailedPreconditionError("no data plane connects this node to node '" + node_ + "'"));
    return;
  }
  WireWrite write;
  write.job = job_;
  write.node = node_;
  write.register_id = wire_register_;
  write.slot = context.output_slots.empty() ? 0 : context.output_slots[0];
  write.data = static_cast<const char*>(context.inputs[0].data);
  write.bytes = bytes_;
  write.stopping = stopping_;
  transport->Write(write, std::move(done));
}

Status SendKernel::Run(const KernelContext& context) {
  Completion completion;
  Start(context, [&completion](Status status) {
    MutexLock lock(&completion.mutex);
    completion.status = std::move(status);
    completion.done = true;
    completion.changed.NotifyAll();  // Under the lock: the waiter cannot return before this.
  });
  MutexLock lock(&completion.mutex);
  while (!completion.done) completion.changed.Wait(&lock);
  return completion.status;
}

}  // namespace runtime
}  // namespace softwire
