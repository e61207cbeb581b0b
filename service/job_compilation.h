// Compiling a submitted job as `softwire run` compiles a job file: the same parser (so errors
// read the same, file name and line included), the run settings a server honours, for a
// cluster of the first K devices of the server, K being the devices the job asks for.
//
//   StatusOr<CompiledJob> compiled = CompileSubmission(submission, server_cluster, data_dir);
//   // compiled->devices devices of the server run compiled->plan (plan::AssignDevices).
//
// Failure: InvalidArgument for a bad job (the text `softwire run` prints after "softwire run: "
// for the same file and settings); FailedPrecondition for a job that does not fit the server:
// more devices than it hosts, or more memory than a device has (the compiler's
// ResourceExhausted, its text kept). Pure function (reads no files).
#ifndef SOFTWIRE_SERVICE_JOB_COMPILATION_H_
#define SOFTWIRE_SERVICE_JOB_COMPILATION_H_

#include <string>

#include "base/status.h"
#include "compiler/compiler.h"
#include "proto/cluster.pb.h"
#include "proto/jobs.pb.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace service {

struct CompiledJob {
  compiler::JobFile file;
  proto::Plan plan;
  // The server devices it runs on: its plan's devices.
  int devices = 1;
  // The degrees it was compiled with (the settings' over the job's, 1 where neither says).
  proto::Parallelism parallel;
  proto::PlanSummary summary;
  // The job's display name: the graph's name, else the submission's file name.
  std::string name;
};

// `job_directory`: where the job's data lies (its data directory), the directory a job file
// would be in.
StatusOr<CompiledJob> CompileSubmission(const proto::JobSubmission& submission,
                                        const proto::Cluster& server,
                                        const std::string& job_directory);

// The first `devices` devices of `cluster`, in its order (nodes without any left out).
proto::Cluster FirstDevices(const proto::Cluster& cluster, int devices);
int ClusterDeviceCount(const proto::Cluster& cluster);

// What a PlanSummary says about `plan`.
proto::PlanSummary SummarizePlan(const proto::Plan& plan, const proto::Parallelism& parallel);

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_JOB_COMPILATION_H_
