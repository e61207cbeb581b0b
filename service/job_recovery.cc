#include "service/job_recovery.h"

#include "base/status.h"
#include "service/job_store.h"

namespace softwire {
namespace service {

const char kDiedWhileRunning[] = "the server stopped while the job was running";

bool JobStateIsTerminal(proto::JobState state) {
  return state == proto::JOB_STATE_SUCCEEDED || state == proto::JOB_STATE_FAILED ||
         state == proto::JOB_STATE_CANCELLED;
}

proto::JobState StateOfTerminalEvent(const proto::JobEvent& event) {
  if (event.has_finished()) return proto::JOB_STATE_SUCCEEDED;
  if (event.has_cancelled()) return proto::JOB_STATE_CANCELLED;
  return proto::JOB_STATE_FAILED;
}

RecoveredJob RecoverJob(const std::string& directory, const std::vector<proto::JobEvent>& events,
                        bool events_ended, proto::JobRecord* record) {
  RecoveredJob recovered;
  proto::JobInfo* info = record->mutable_info();
  int64_t steps = 0;
  for (const proto::JobEvent& event : events) {
    if (event.has_step()) {
      ++steps;
      info->set_last_loss(event.step().loss());
      info->set_samples_per_second(event.step().samples_per_second());
    }
  }
  info->set_completed_steps(steps);
  if (!JobStateIsTerminal(info->state()) && events_ended) {
    // It ended, and the server died before the record said so.
    const proto::JobEvent& last = events.back();
    info->set_state(StateOfTerminalEvent(last));
    info->set_ended_unix(last.time_unix());
    if (last.has_failed()) info->set_error(last.failed().error());
    if (last.has_cancelled()) info->set_error(last.cancelled().reason());
    recovered.action = RecoveredJob::Action::kRewriteRecord;
  } else if (info->state() == proto::JOB_STATE_RUNNING) {
    recovered.action = RecoveredJob::Action::kFail;
    recovered.failure.mutable_failed()->set_error(kDiedWhileRunning);
    recovered.failure.mutable_failed()->set_code(StatusCodeName(StatusCode::kAborted));
  } else if (info->state() == proto::JOB_STATE_QUEUED) {
    StatusOr<proto::Plan> plan = JobStore::ReadPlan(directory);
    if (!plan.ok()) {
      recovered.action = RecoveredJob::Action::kFail;
      recovered.failure.mutable_failed()->set_error("its plan cannot be read back: " +
                                                    plan.status().message());
      recovered.failure.mutable_failed()->set_code(StatusCodeName(plan.status().code()));
    } else {
      recovered.action = RecoveredJob::Action::kQueue;
      recovered.plan = std::make_unique<proto::Plan>(std::move(*plan));
    }
  }
  return recovered;
}

}  // namespace service
}  // namespace softwire
