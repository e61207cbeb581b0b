// LaunchOutcome: what a cuda kernel implements when part of its work reports its own result
// after the device reached the launch's end (a host function run in stream order: a
// HostStagedKernel's cpu kernel). The queue's completion thread asks it once per launch, in
// launch order, after the launch's event was reached, and reports the result as the launch's
// status. No CUDA types: the completion thread that asks is built without CUDA.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CUDA_LAUNCH_OUTCOME_H_
#define SOFTWIRE_RUNTIME_KERNELS_CUDA_LAUNCH_OUTCOME_H_

#include "base/status.h"

namespace softwire {
namespace runtime {

class LaunchOutcome {
 public:
  virtual ~LaunchOutcome() = default;
  // The result of the oldest launch not yet asked about. Called from the completion thread.
  virtual Status TakeOutcome() = 0;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CUDA_LAUNCH_OUTCOME_H_
