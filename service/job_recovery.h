// Reading a job back: what JobManager::Start does with each job record it finds in the state
// directory. The record's info is brought up to date from the job's events (steps done, last
// loss; an end the server recorded in the events but died before writing to the record), and
// the answer says what to do: keep it as it is, rewrite its record, fail it (it was running
// when the server died, or its plan cannot be read back), or queue it again with its plan.
//
//   RecoveredJob recovered = RecoverJob(directory, events->events(), events->ended(), &record);
//
// Pure except for reading plan.pb of a queued job.
#ifndef SOFTWIRE_SERVICE_JOB_RECOVERY_H_
#define SOFTWIRE_SERVICE_JOB_RECOVERY_H_

#include <memory>
#include <string>
#include <vector>

#include "proto/jobs.pb.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace service {

// Why a job that was running when the server died failed.
extern const char kDiedWhileRunning[];

bool JobStateIsTerminal(proto::JobState state);
// The state a feed's terminal event (finished, cancelled, failed) means.
proto::JobState StateOfTerminalEvent(const proto::JobEvent& event);

struct RecoveredJob {
  enum class Action {
    kKeep,           // Ended (or otherwise settled) as recorded.
    kRewriteRecord,  // Ended per its events: the record was updated and must be written.
    kFail,           // End it with `failure`.
    kQueue,          // Queue it again with `plan`.
  };
  Action action = Action::kKeep;
  proto::JobEvent failure;
  std::unique_ptr<proto::Plan> plan;
};

// `directory`: the job's folder (jobs/<id>); `events` and `events_ended`: its event log's.
RecoveredJob RecoverJob(const std::string& directory, const std::vector<proto::JobEvent>& events,
                        bool events_ended, proto::JobRecord* record);

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_JOB_RECOVERY_H_
