// Every job of the bad-input corpus (tests/compiler/bad_input), submitted over gRPC, is refused
// with the message `softwire run` prints for it, `softwire submit` exits 2 with that message
// too, and the server keeps serving. The code is INVALID_ARGUMENT, except for a job that does not
// fit the server's devices (more devices than it hosts, more memory than a device has), which
// job_service.proto answers with FAILED_PRECONDITION.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/file.h"
#include "cli/testing/softwire_process.h"
#include "proto/job_service.grpc.pb.h"
#include "runtime/rpc/rpc_security.h"
#include "service/rpc/job_client.h"
#include "tests/service/serve_process.h"

namespace softwire {
namespace {

using service_testing::ClientFor;
using service_testing::CommandOutcome;
using service_testing::ServeProcess;
using service_testing::TestDirectory;

const char kBadInputDirectory[] = "tests/compiler/bad_input";

struct BadJob {
  std::string path;
  std::string text;
  std::string cluster = "1cpu";  // The cluster the corpus file asks for.
  grpc::StatusCode code = grpc::StatusCode::INVALID_ARGUMENT;
};

// The corpus files whose jobs do not fit the devices of the cluster they name.
bool DoesNotFitTheDevices(const std::string& path) {
  for (const char* name : {"more_devices_than_the_cluster", "parallel_degrees_overflow",
                           "over_memory_budget", "parallel_over_memory_budget"}) {
    if (path == std::string(kBadInputDirectory) + "/" + name + ".pbtxt") return true;
  }
  return false;
}

std::vector<BadJob> Corpus() {
  std::vector<BadJob> jobs;
  for (const auto& entry : std::filesystem::directory_iterator(kBadInputDirectory)) {
    if (entry.path().extension() != ".pbtxt") continue;
    BadJob job;
    job.path = std::string(kBadInputDirectory) + "/" + entry.path().filename().string();
    job.text = *ReadFile(job.path);
    std::istringstream lines(job.text);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("# cluster: ", 0) == 0) job.cluster = line.substr(11);
      if (line.rfind("# memory_bytes: ", 0) == 0) job.cluster = "1cpu:" + line.substr(16) + "B";
    }
    if (DoesNotFitTheDevices(job.path)) job.code = grpc::StatusCode::FAILED_PRECONDITION;
    jobs.push_back(job);
  }
  std::sort(jobs.begin(), jobs.end(),
            [](const BadJob& a, const BadJob& b) { return a.path < b.path; });
  return jobs;
}

// What `softwire run` says after "softwire run: ".
std::string RunMessage(const std::string& output) {
  const std::string prefix = "softwire run: ";
  const size_t at = output.find(prefix);
  if (at == std::string::npos) return output;
  std::string message = output.substr(at + prefix.size());
  while (!message.empty() && message.back() == '\n') message.pop_back();
  return message;
}

TEST(BadInputTest, EveryBadJobIsRefusedWithRunsMessageAndTheServerKeepsServing) {
  const std::vector<BadJob> corpus = Corpus();
  ASSERT_GE(corpus.size(), 30u);
  const std::string directory = TestDirectory("bad_input");
  // One server per cluster the corpus asks for.
  std::map<std::string, std::unique_ptr<ServeProcess>> servers;
  for (const BadJob& job : corpus) {
    std::unique_ptr<ServeProcess>& server = servers[job.cluster];
    if (server != nullptr) continue;
    server = std::make_unique<ServeProcess>(SOFTWIRE_BINARY,
                                            std::vector<std::string>{"--cluster", job.cluster},
                                            directory + "/state_" + std::to_string(servers.size()));
    ASSERT_TRUE(server->Start()) << job.cluster << "\n" << server->Output();
  }
  for (const BadJob& job : corpus) {
    SCOPED_TRACE(job.path);
    const ServeProcess& server = *servers[job.cluster];
    CommandOutcome run = service_testing::RunSoftwire(
        SOFTWIRE_BINARY, "run " + job.path + " --cluster " + job.cluster);
    ASSERT_EQ(run.exit_code, 2) << run.output;
    const std::string expected = RunMessage(run.output);

    // The raw call: the code and the message exactly.
    auto stub = proto::JobService::NewStub(
        rpc::CreateClientChannel(server.address(), rpc::ClientSecurity()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    proto::SubmitJobRequest request;
    request.mutable_submission()->set_job_text(job.text);
    request.mutable_submission()->set_file_name(job.path);
    proto::SubmitJobResponse response;
    grpc::Status status = stub->SubmitJob(&context, request, &response);
    EXPECT_EQ(status.error_code(), job.code) << status.error_message();
    EXPECT_EQ(status.error_message(), expected);

    // The command line: exit 2, the same message.
    CommandOutcome submit = service_testing::RunSoftwire(
        SOFTWIRE_BINARY, "submit " + job.path + " --to " + server.address());
    EXPECT_EQ(submit.exit_code, 2) << submit.output;
    EXPECT_EQ(submit.output, "softwire submit: " + expected + "\n");
  }
  // Still serving: nothing was queued, and a good job runs.
  for (auto& [cluster, server] : servers) {
    service::JobClient client(ClientFor(server->address()));
    StatusOr<std::vector<proto::JobInfo>> jobs = client.ListJobs();
    ASSERT_TRUE(jobs.ok()) << cluster << ": " << jobs.status();
    EXPECT_TRUE(jobs->empty()) << cluster;
  }
  service::JobClient client(ClientFor(servers["1cpu"]->address()));
  StatusOr<proto::SubmitJobResponse> good = client.Submit(service_testing::TinySubmission(2));
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(
      service_testing::WaitForState(&client, good->job().job_id(), proto::JOB_STATE_SUCCEEDED, 60)
          .state(),
      proto::JOB_STATE_SUCCEEDED);
}

}  // namespace
}  // namespace softwire
