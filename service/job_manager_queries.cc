// JobManager's reading half (job_manager_impl.h): jobs, their events, devices, results and
// live diagnosis, as clients ask for them.
#include <algorithm>
#include <string>
#include <vector>

#include "plan/labels.h"
#include "service/job_manager_impl.h"
#include "service/job_recovery.h"
#include "service/stored_results.h"

namespace softwire {
namespace service {

ManagedJob* JobManager::Impl::FindLocked(const std::string& job_id) const {
  auto found = jobs_.find(job_id);
  return found == jobs_.end() ? nullptr : found->second.get();
}

proto::JobInfo JobManager::Impl::InfoLocked(const ManagedJob& job) const {
  proto::JobInfo info = job.record.info();
  info.set_last_event(job.events->last_sequence());
  return info;
}

StatusOr<std::vector<proto::JobEvent>> JobManager::Impl::WaitForEvents(
    const std::string& job_id, int64_t from, std::chrono::milliseconds timeout) {
  std::shared_ptr<EventLog> events;
  {
    MutexLock lock(&mutex_);
    ManagedJob* job = FindLocked(job_id);
    if (job == nullptr) return NotFoundError("no job '" + job_id + "'");
    events = job->events;
  }
  return events->WaitSince(from, timeout);
}

StatusOr<proto::JobInfo> JobManager::Impl::GetJob(const std::string& job_id) const {
  MutexLock lock(&mutex_);
  ManagedJob* job = FindLocked(job_id);
  if (job == nullptr) return NotFoundError("no job '" + job_id + "'");
  return InfoLocked(*job);
}

std::vector<proto::JobInfo> JobManager::Impl::ListJobs(const std::vector<proto::JobState>& states,
                                                       int limit) const {
  std::vector<proto::JobInfo> jobs;
  {
    MutexLock lock(&mutex_);
    for (const auto& [id, job] : jobs_) {
      if (!states.empty() &&
          std::find(states.begin(), states.end(), job->record.info().state()) == states.end()) {
        continue;
      }
      jobs.push_back(InfoLocked(*job));
    }
  }
  std::sort(jobs.begin(), jobs.end(), [](const proto::JobInfo& a, const proto::JobInfo& b) {
    return JobNumber(a.job_id()) > JobNumber(b.job_id());
  });
  if (limit > 0 && static_cast<int>(jobs.size()) > limit) jobs.resize(static_cast<size_t>(limit));
  return jobs;
}

std::vector<proto::DeviceInfo> JobManager::Impl::ListDevices() const {
  std::vector<proto::DeviceInfo> devices;
  std::vector<std::shared_ptr<JobRun>> holders;
  {
    MutexLock lock(&mutex_);
    for (int i = 0; i < devices_.size(); ++i) {
      ManagedJob* holder = devices_.holder(i).empty() ? nullptr : FindLocked(devices_.holder(i));
      holders.push_back(holder != nullptr ? holder->execution : nullptr);
      devices.push_back(devices_.Info(i));
    }
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    if (holders[i]) devices[i].set_allocated_bytes(holders[i]->AllocatedBytes(devices[i].device()));
  }
  return devices;
}

int64_t JobManager::Impl::QueuedJobs() const {
  MutexLock lock(&mutex_);
  return queue_.size();
}

StatusOr<StoredResults> JobManager::Impl::GetResults(const std::string& job_id) const {
  StoredResults results;
  std::shared_ptr<EventLog> events;
  std::string directory;
  {
    MutexLock lock(&mutex_);
    ManagedJob* job = FindLocked(job_id);
    if (job == nullptr) return NotFoundError("no job '" + job_id + "'");
    if (!JobStateIsTerminal(job->record.info().state())) {
      return FailedPreconditionError("job '" + job_id + "' has not ended");
    }
    results.job = InfoLocked(*job);
    events = job->events;
    directory = job->directory;
  }
  for (const proto::JobEvent& event : events->events()) {
    if (event.has_step()) results.steps.push_back(event.step());
    // A restart runs the steps after its checkpoint again: the lost run's of those are dropped.
    if (event.has_restarted() && event.restarted().device_size() > 0) {
      while (!results.steps.empty() &&
             results.steps.back().step() >= event.restarted().resumed_from_step()) {
        results.steps.pop_back();
      }
    }
  }
  SOFTWIRE_RETURN_IF_ERROR(ReadStoredResults(directory, &results));
  return results;
}

StatusOr<runtime::JobWaitStates> JobManager::Impl::DescribeWaits(
    const std::string& job_id, std::chrono::milliseconds timeout) {
  std::shared_ptr<JobRun> execution;
  {
    MutexLock lock(&mutex_);
    ManagedJob* job = FindLocked(job_id);
    if (job == nullptr) return NotFoundError("no job '" + job_id + "'");
    if (job->record.info().state() != proto::JOB_STATE_RUNNING || !job->execution) {
      return FailedPreconditionError("job '" + job_id + "' is not running");
    }
    execution = job->execution;
  }
  return execution->DescribeWaits(timeout);
}

// The facade.

}  // namespace service
}  // namespace softwire
