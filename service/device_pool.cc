#include "service/device_pool.h"

#include <utility>

#include "plan/labels.h"

namespace softwire {
namespace service {

void DevicePool::Reset(std::vector<proto::PlanDevice> devices) {
  devices_ = std::move(devices);
  holders_.assign(devices_.size(), "");
  available_.assign(devices_.size(), true);
}

void DevicePool::SetAvailable(const std::vector<proto::PlanDevice>& live) {
  available_.assign(devices_.size(), false);
  for (const proto::PlanDevice& device : live) {
    const std::string name = plan::DeviceName(device);
    size_t index = 0;
    while (index < devices_.size() && plan::DeviceName(devices_[index]) != name) ++index;
    if (index == devices_.size()) {
      devices_.emplace_back();
      holders_.emplace_back();
      available_.push_back(false);
    }
    devices_[index] = device;
    devices_[index].set_id(static_cast<int32_t>(index));
    available_[index] = true;
  }
}

std::vector<bool> DevicePool::Free() const {
  std::vector<bool> free(devices_.size());
  for (size_t i = 0; i < free.size(); ++i) free[i] = holders_[i].empty() && available_[i];
  return free;
}

void DevicePool::Hold(const std::vector<int>& devices, const std::string& job_id) {
  for (int device : devices) holders_[static_cast<size_t>(device)] = job_id;
}

void DevicePool::Release(const std::vector<int>& devices) {
  for (int device : devices) holders_[static_cast<size_t>(device)].clear();
}

proto::DeviceInfo DevicePool::Info(int index) const {
  const size_t i = static_cast<size_t>(index);
  const proto::PlanDevice& device = devices_[i];
  proto::DeviceInfo info;
  info.set_device(plan::DeviceName(device));
  info.set_kind(plan::DeviceKindName(device.kind()));
  info.set_cores(device.cores());
  info.set_memory_bytes(device.memory_budget());
  info.set_job_id(holders_[i]);
  info.set_node(device.node());
  info.set_available(available_[i]);
  return info;
}

}  // namespace service
}  // namespace softwire
