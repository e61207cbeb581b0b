#include "service/job_queue.h"

#include <algorithm>

namespace softwire {
namespace service {

void JobQueue::Push(std::string job_id, int devices) {
  queued_.push_back({std::move(job_id), std::max(1, devices)});
}

bool JobQueue::Remove(const std::string& job_id) {
  auto found = std::find_if(queued_.begin(), queued_.end(),
                            [&](const Queued& queued) { return queued.job_id == job_id; });
  if (found == queued_.end()) return false;
  queued_.erase(found);
  return true;
}

int64_t JobQueue::Position(const std::string& job_id) const {
  for (size_t i = 0; i < queued_.size(); ++i) {
    if (queued_[i].job_id == job_id) return static_cast<int64_t>(i);
  }
  return -1;
}

std::vector<JobQueue::Start> JobQueue::TakeStartable(std::vector<bool>* free) {
  std::vector<Start> starts;
  int free_count = static_cast<int>(std::count(free->begin(), free->end(), true));
  for (auto it = queued_.begin(); it != queued_.end() && free_count > 0;) {
    if (it->devices > free_count) {
      ++it;  // Keeps its place; later jobs may fit (backfill).
      continue;
    }
    Start start;
    start.job_id = it->job_id;
    for (size_t device = 0;
         device < free->size() && static_cast<int>(start.devices.size()) < it->devices; ++device) {
      if (!(*free)[device]) continue;
      (*free)[device] = false;
      start.devices.push_back(static_cast<int>(device));
    }
    free_count -= it->devices;
    starts.push_back(std::move(start));
    it = queued_.erase(it);
  }
  return starts;
}

}  // namespace service
}  // namespace softwire
