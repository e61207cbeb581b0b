#include "runtime/device/device.h"

#include <algorithm>

namespace softwire {
namespace runtime {

int KernelThreads(const proto::PlanDevice& plan_device, const DeviceOptions& options) {
  return options.kernel_threads > 0 ? options.kernel_threads : std::max(1, plan_device.cores());
}

}  // namespace runtime
}  // namespace softwire
