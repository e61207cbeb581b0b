// JobManager::Impl's restart of a job on nodes after a lost node (RunSettings.max_restarts;
// docs/NODES.md, "Restarts"): the job keeps its devices on the live nodes, waits (bounded) for
// free devices to replace the lost node's, and runs again from its latest whole checkpoint.
#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "base/file.h"
#include "plan/device_assignment.h"
#include "plan/labels.h"
#include "plan/steps.h"
#include "runtime/host/checkpoint_files.h"
#include "service/job_manager_impl.h"
#include "service/job_store.h"

namespace softwire {
namespace service {
namespace {

constexpr char kCheckpointFolder[] = "checkpoints";
constexpr double kDefaultRestartWaitSeconds = 60;

// The lines of `metrics` (metrics.jsonl: one JSON object per step, with "step": N) of the steps
// before `step`: a restarted run re-runs the steps after its checkpoint, whose lines of the lost
// run are dropped.
std::string MetricsBefore(const std::string& metrics, int64_t step) {
  std::string kept;
  std::istringstream lines(metrics);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t at = line.find("\"step\":");
    if (at == std::string::npos) continue;
    long long number = -1;
    if (std::sscanf(line.c_str() + at + 7, "%lld", &number) != 1) continue;
    if (number < step) kept += line + "\n";
  }
  return kept;
}

// "job 'NAME' failed: node 'node1' was lost: ..." with what the restart made of it.
Status WithRestartNote(const Status& status, const std::string& note) {
  return Status(status.code(), status.message() + " (" + note + ")");
}

}  // namespace

std::vector<int> JobManager::Impl::RestartDevicesLocked(const ManagedJob& job, int needed) const {
  const std::string& id = job.record.info().job_id();
  const std::vector<bool> free = devices_.Free();
  std::vector<int> held;    // Still its own, on live nodes.
  std::vector<int> others;  // Free.
  for (int device = 0; device < devices_.size(); ++device) {
    const bool ours = devices_.holder(device) == id;
    if (ours && devices_.Info(device).available()) {
      held.push_back(device);
    } else if (!ours && free[static_cast<size_t>(device)]) {
      others.push_back(device);
    }
  }
  if (static_cast<int>(held.size() + others.size()) < needed) return {};
  // The devices it holds first, so that a restart moves as little as it can.
  std::vector<int> chosen = std::move(held);
  chosen.insert(chosen.end(), others.begin(), others.end());
  chosen.resize(static_cast<size_t>(needed));
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

std::shared_ptr<JobRun> JobManager::Impl::RestartJob(ManagedJob* job, JobOutcome* outcome) {
  const proto::RunSettings settings = job->record.submission().settings();
  const std::string id = job->record.info().job_id();
  int restart = 0;
  {
    MutexLock lock(&mutex_);
    if (settings.max_restarts() <= 0) return nullptr;
    if (job->record.info().restarts() >= settings.max_restarts()) {
      outcome->status = WithRestartNote(
          outcome->status, "restarted " + std::to_string(job->record.info().restarts()) +
                               " times already, the most it allows");
      return nullptr;
    }
    if (stopping_ || !job->cancel_reason.empty()) return nullptr;
    restart = job->record.info().restarts() + 1;
    job->record.mutable_info()->set_restarts(restart);
  }
  // The latest whole checkpoint, else from the start.
  const std::string results = JobStore::ResultsDirectory(job->directory);
  std::optional<runtime::TrainingState> resume;
  if (settings.checkpoint_every() > 0) {
    std::vector<std::string> skipped;
    StatusOr<runtime::TrainingState> latest =
        runtime::LoadLatestCheckpoint(results + "/" + kCheckpointFolder, &skipped);
    for (const std::string& why : skipped) LOG(WARNING) << "job " << id << ": " << why;
    if (latest.ok()) resume = std::move(*latest);
  }
  const int64_t from_step = resume ? resume->step : 0;
  proto::JobEvent restarted;
  proto::JobRestarted* event = restarted.mutable_restarted();
  event->set_lost_node(outcome->lost_node);
  event->set_error(outcome->status.message());
  event->set_restart(restart);
  event->set_max_restarts(settings.max_restarts());
  event->set_resumed_from_step(from_step);
  if (resume) {
    event->set_checkpoint(std::string(kCheckpointFolder) + "/" +
                          runtime::CheckpointFolder("", from_step).substr(1));
  }
  const double wait_seconds = settings.restart_wait_seconds() > 0 ? settings.restart_wait_seconds()
                                                                  : kDefaultRestartWaitSeconds;
  event->set_wait_seconds(wait_seconds);
  LOG(INFO) << "job " << id << ": node '" << outcome->lost_node << "' was lost; restart " << restart
            << " of " << settings.max_restarts() << " from step " << from_step;

  StatusOr<proto::Plan> plan = JobStore::ReadPlan(job->directory);
  if (plan.ok() && from_step > 0) {
    plan = plan::LimitSteps(*plan, plan->schedule().steps() - from_step);
  }
  if (!plan.ok()) {
    outcome->status = WithRestartNote(outcome->status, "no restart: " + plan.status().message());
    return nullptr;
  }
  const int needed = job->devices_needed;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(wait_seconds));
  MutexLock lock(&mutex_);
  {
    // The lost node's devices go back to the pool; the live ones stay the job's.
    std::vector<int> lost;
    for (int device : job->devices) {
      if (!devices_.Info(device).available()) lost.push_back(device);
    }
    devices_.Release(lost);
  }
  StatusOr<proto::JobEvent> appended = job->events->Append(restarted);
  if (!appended.ok()) LOG(WARNING) << "job " << id << ": " << appended.status();
  std::vector<int> devices;
  for (;;) {
    if (stopping_ || !job->cancel_reason.empty()) {
      outcome->status = CancelledError(stopping_ ? "the server stopped" : job->cancel_reason);
      outcome->cancelled = true;
      outcome->cancel_reason = outcome->status.message();
      return nullptr;
    }
    devices = RestartDevicesLocked(*job, needed);
    if (!devices.empty()) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      outcome->status = WithRestartNote(
          outcome->status, "restart " + std::to_string(restart) + " waited " +
                               std::to_string(static_cast<int>(wait_seconds)) + " s for " +
                               std::to_string(needed) + " free devices on live nodes in vain");
      return nullptr;
    }
    changed_.WaitUntil(&lock, std::min(deadline, std::chrono::steady_clock::now() +
                                                     std::chrono::milliseconds(200)));
  }
  std::vector<proto::PlanDevice> targets;
  for (int device : devices) targets.push_back(devices_.device(device));
  Status assigned = plan::AssignDevices(targets, &*plan);
  if (!assigned.ok()) {
    outcome->status = WithRestartNote(outcome->status, "no restart: " + assigned.message());
    return nullptr;
  }
  std::vector<int> released;
  for (int device : job->devices) {
    if (std::find(devices.begin(), devices.end(), device) == devices.end()) {
      released.push_back(device);
    }
  }
  devices_.Release(released);
  devices_.Hold(devices, id);
  job->devices = devices;
  proto::JobInfo* info = job->record.mutable_info();
  info->clear_device();
  for (const proto::PlanDevice& device : targets) {
    info->add_device(plan::DeviceName(device));
    event->add_device(plan::DeviceName(device));
  }
  info->set_completed_steps(from_step);
  appended = job->events->Append(std::move(restarted));
  if (!appended.ok()) LOG(WARNING) << "job " << id << ": " << appended.status();
  WriteRecordLocked(job);

  JobRunSpec spec;
  spec.job_id = id;
  spec.plan = std::move(*plan);
  spec.data_directory = JobStore::DataDirectory(job->directory);
  spec.results_directory = results;
  spec.settings = settings;
  StatusOr<std::string> metrics = ReadFile(results + "/metrics.jsonl");
  if (metrics.ok()) spec.metrics_before = MetricsBefore(*metrics, from_step);
  spec.resume = std::move(resume);
  job->execution = NewRun(job, std::move(spec));
  return job->execution;
}

}  // namespace service
}  // namespace softwire
