// LaunchOutcome: what a cuda kernel implements when part of its work reports its own result
// after the device reached the launch's end (a HostStagedKernel's cpu kernel: run in stream
// order by a host function, or, for a sink, run here on the values the launch copied out). The
// queue's completion thread asks it once per launch, in launch order, after the launch's event was
// reached, and reports the result as the launch's status. No CUDA types: the completion thread that
// asks is built without CUDA.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CUDA_LAUNCH_OUTCOME_H_
#define SOFTWIRE_RUNTIME_KERNELS_CUDA_LAUNCH_OUTCOME_H_

#include "base/status.h"

namespace softwire {
namespace runtime {

class LaunchOutcome {
 public:
  virtual ~LaunchOutcome() = default;
  // The result of the oldest launch not yet asked about. Called from the completion thread.
  // `reached`: the device reached the launch's end without error, so what the launch wrote is
  // there to read (a sink's staged value); false when the launch failed or was cancelled, and
  // then the kernel must not use it.
  virtual Status TakeOutcome(bool reached) = 0;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CUDA_LAUNCH_OUTCOME_H_
