// JobStore: where a job service keeps its jobs in the state directory (JobManager's file
// comment lists the layout), and the reading and writing of each file but the event log
// (event_log.h).
//
//   JobStore store("/var/lib/softwire");
//   store.Prepare();                                 // jobs/, an empty jobs/.staging/
//   std::string staging = store.StagingDirectory("job-3");
//   ... write data/, plan.pb, events.log, record.pb into it ...
//   store.Commit("job-3");                           // jobs/job-3, whole or not at all
//
// A job is written into jobs/.staging/<id>/ and renamed into jobs/<id>/ once whole, so a killed
// server leaves every job recorded whole or not at all; Prepare clears what a killed server
// left staged. record.pb is replaced atomically (base/file.h) at every change.
//
// Threading: the store holds no state; callers keep two threads off one job's files.
#ifndef SOFTWIRE_SERVICE_JOB_STORE_H_
#define SOFTWIRE_SERVICE_JOB_STORE_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "proto/jobs.pb.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace service {

class JobStore {
 public:
  explicit JobStore(std::string state_directory);

  // Creates the state directory and jobs/ when missing and empties jobs/.staging/.
  // InvalidArgument naming the directory when it cannot be used.
  Status Prepare() const;

  const std::string& state_directory() const { return state_directory_; }
  std::string JobDirectory(const std::string& job_id) const;
  std::string StagingDirectory(const std::string& job_id) const;
  // Inside a job's directory (the staged one or the committed one).
  static std::string RecordPath(const std::string& job_directory);
  static std::string PlanPath(const std::string& job_directory);
  static std::string EventsPath(const std::string& job_directory);
  static std::string DataDirectory(const std::string& job_directory);
  static std::string ResultsDirectory(const std::string& job_directory);

  // Moves a staged job into jobs/<id>/.
  Status Commit(const std::string& job_id) const;
  // Deletes a job's directory (staged or committed), with everything in it.
  void Remove(const std::string& job_directory) const;

  static Status WriteRecord(const std::string& job_directory, const proto::JobRecord& record);
  static Status WritePlan(const std::string& job_directory, const proto::Plan& plan);
  static StatusOr<proto::Plan> ReadPlan(const std::string& job_directory);

  // The record of every committed job (jobs/*/record.pb), in no particular order. A folder
  // without a readable record is skipped with a warning.
  std::vector<proto::JobRecord> ReadRecords() const;

 private:
  const std::string state_directory_;
};

// "job-17" -> 17; 0 for a name of another form.
int64_t JobNumber(const std::string& job_id);

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_JOB_STORE_H_
