#include "runtime/device/device.h"

#include <algorithm>

namespace softwire {
namespace runtime {

int KernelThreads(const proto::PlanDevice& plan_device, const DeviceOptions& options) {
  return options.kernel_threads > 0 ? options.kernel_threads : std::max(1, plan_device.cores());
}

std::string DeviceThreadName(const proto::PlanDevice& plan_device, int thread) {
  std::string device;
  for (char c : plan_device.name()) {
    if (c != ':') device += c;
  }
  std::string node = plan_device.node();
  if (node == "node0") {
    node.clear();
  } else if (node.rfind("node", 0) == 0) {
    node = "n" + node.substr(4);
  }
  return "sw:" + node + device + "/k" + std::to_string(thread);
}

}  // namespace runtime
}  // namespace softwire
