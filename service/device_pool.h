// DevicePool: the devices a JobManager runs jobs on, which job holds each, and whether each is
// available: always for the server's own devices; for a node agent's, while its node is live
// (a node that leaves keeps its devices' places, unavailable, until it joins again).
//
//   DevicePool pool;
//   pool.SetAvailable(live_devices);            // the live nodes' devices, as they change
//   std::vector<bool> free = pool.Free();       // for JobQueue::TakeStartable
//   pool.Hold({0, 2}, "job-3");  ...  pool.Release({0, 2});
//
// Not thread-safe: the manager guards it with its lock.
#ifndef SOFTWIRE_SERVICE_DEVICE_POOL_H_
#define SOFTWIRE_SERVICE_DEVICE_POOL_H_

#include <string>
#include <vector>

#include "proto/jobs.pb.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace service {

class DevicePool {
 public:
  // The server's own devices: every one available.
  void Reset(std::vector<proto::PlanDevice> devices);
  // `live` (by name, "node1/cpu:0") are available now, their descriptions as given; a device
  // not known before is added at the end; every other one is unavailable.
  void SetAvailable(const std::vector<proto::PlanDevice>& live);

  // Per device: free (no job holds it) and available.
  std::vector<bool> Free() const;
  const proto::PlanDevice& device(int index) const { return devices_[static_cast<size_t>(index)]; }
  // The job holding device `index`; empty when free.
  const std::string& holder(int index) const { return holders_[static_cast<size_t>(index)]; }
  int size() const { return static_cast<int>(devices_.size()); }
  void Hold(const std::vector<int>& devices, const std::string& job_id);
  void Release(const std::vector<int>& devices);
  // What ListDevices says about device `index`, its allocated bytes left out.
  proto::DeviceInfo Info(int index) const;

 private:
  std::vector<proto::PlanDevice> devices_;
  std::vector<std::string> holders_;  // Job id per device; "": free.
  std::vector<bool> available_;
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_DEVICE_POOL_H_
