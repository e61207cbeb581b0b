// Fuzz target: the job service's submit path. Input: a serialized proto::JobSubmission, as the
// gRPC JobService hands it to JobManager::Submit. It goes through the checks Submit runs before
// it stores anything (service/submission_check.h: the graph's size, the compilation of its
// job_text or job with its run settings for the server's first devices, the data files it
// sends and names) for a server of two nodes of two cpu devices with 64 MiB each and a data
// root holding one file. Any bytes must give a Status or a compiled job, never a crash.
//
// Not a whole JobManager per input: starting one (actor system, devices, state directory)
// costs milliseconds per input, and what follows the checks (writing the staged job, queueing)
// does not depend on the bytes beyond what the checks accepted.
#include <glog/logging.h>
#include <google/protobuf/stubs/logging.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz/fuzz_target.h"
#include "placement/cluster_spec.h"
#include "proto/jobs.pb.h"
#include "service/submission_check.h"

namespace softwire {
namespace {

struct FuzzServer {
  proto::Cluster cluster;
  std::string data_root;  // A temporary folder with "train/x.npy" in it.
  std::string job_directory;
  service::JobLimits limits;
};

void RemoveDataRoot();

const FuzzServer& Server() {
  static const FuzzServer* const server = [] {
    auto* made = new FuzzServer;
    StatusOr<proto::Cluster> cluster = placement::ParseClusterShorthand("2x2cpu:64MiB", 2);
    CHECK(cluster.ok()) << cluster.status().message();
    made->cluster = *cluster;
    std::string pattern =
        (std::filesystem::temp_directory_path() / "softwire-fuzz-submission-XXXXXX").string();
    CHECK(mkdtemp(pattern.data()) != nullptr) << "cannot create a temporary folder";
    made->data_root = pattern;
    std::filesystem::create_directories(made->data_root + "/train");
    std::ofstream(made->data_root + "/train/x.npy") << "not read by the checks";
    made->job_directory = made->data_root + "/job-1/data";
    made->limits.max_job_bytes = 64 << 10;
    made->limits.max_upload_bytes = 64 << 10;
    std::atexit(RemoveDataRoot);
    return made;
  }();
  return *server;
}

void RemoveDataRoot() {
  std::error_code ignored;
  std::filesystem::remove_all(Server().data_root, ignored);
}

void Submit(const proto::JobSubmission& submission) {
  const FuzzServer& server = Server();
  StatusOr<service::CheckedSubmission> checked = service::CheckSubmission(
      submission, server.cluster, server.job_directory, server.data_root, server.limits);
  if (!checked.ok()) return;
  // What Submit records next: the summary of the plan it queues.
  const service::CompiledJob& compiled = checked->compiled;
  if (compiled.devices < 1 || compiled.devices > service::ClusterDeviceCount(server.cluster)) {
    std::abort();
  }
}

}  // namespace
}  // namespace softwire

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  google::protobuf::LogSilencer quiet;  // Not a log line per string field that is not UTF-8.
  softwire::proto::JobSubmission submission;
  if (!submission.ParseFromArray(data, static_cast<int>(size))) return 0;
  softwire::Submit(submission);
  return 0;
}
