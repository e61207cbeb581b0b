// The data of a submitted job: the files it sends (uploads) and the files it names under the
// server's data root, checked before anything runs and gathered into the job's one data
// directory (jobs/<id>/data/), which is the DataRoot its plan is hosted with (confined).
//
//   StatusOr<JobData> data = CheckJobData(submission, job, data_root, limits.max_upload_bytes);
//   if (!data.ok()) return data.status();          // InvalidArgument, ResourceExhausted
//   Status written = WriteJobData(*data, job_data_directory);
//
// Why links: a hosted plan resolves every data path against one directory (data/data_root.h).
// A job may mix files it sends with files of the data root, so the data directory holds the
// uploads as files and, for each data-root file the job names, a symbolic link at the same
// relative path to the file's real path as checked at submit time. The job then reads only
// what was checked (a link made later inside the data root cannot lead it out), its uploads are
// kept and deleted with the job, and data-root files are never copied.
//
// Pure checks (CheckJobData reads only the file system's names); WriteJobData writes.
#ifndef SOFTWIRE_SERVICE_JOB_DATA_H_
#define SOFTWIRE_SERVICE_JOB_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/job.pb.h"
#include "proto/jobs.pb.h"

namespace softwire {
namespace service {

// A data path a job names, and what names it ("source 'train'", "variable 'w1'").
struct NamedDataPath {
  std::string path;
  std::string user;
};

// Every data path of `job`: npy and text datasets, npy initializers, in the job's order.
std::vector<NamedDataPath> DataPathsOf(const proto::Job& job);

// One file of the job's data directory.
struct JobDataFile {
  std::string path;           // Relative, normalised: "data/x.npy".
  const std::string* upload;  // The bytes sent (borrowed from the submission), or null:
  std::string link_target;    // then the real path under the data root it links to.
};

struct JobData {
  std::vector<JobDataFile> files;
};

// Checks the submission's files (relative, no '..' part, each path once, together at most
// `max_upload_bytes`: ResourceExhausted past it) and every data path `job` names: either one of
// those files or a file under `data_root` whose real path (symbolic links resolved) lies inside
// the data root's real path. InvalidArgument naming the source or variable and the path
// otherwise. The result borrows the submission's bytes.
StatusOr<JobData> CheckJobData(const proto::JobSubmission& submission, const proto::Job& job,
                               const std::string& data_root, int64_t max_upload_bytes);

// Writes the uploads and makes the links under `directory` (created when missing).
Status WriteJobData(const JobData& data, const std::string& directory);

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_JOB_DATA_H_
