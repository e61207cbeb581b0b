// What a server refuses: calls without its token (UNAUTHENTICATED; health answers anyway), data
// paths outside its data root, a wide address without TLS and a token. TLS with a self-signed
// certificate works end to end when openssl is there to make one.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "base/file.h"
#include "base/npy.h"
#include "cli/testing/softwire_process.h"
#include "proto/diagnostics.grpc.pb.h"
#include "proto/job_service.grpc.pb.h"
#include "runtime/rpc/rpc_security.h"
#include "service/rpc/job_client.h"
#include "tests/service/serve_process.h"

namespace softwire {
namespace {

using cli_testing::Contains;
using service_testing::ClientFor;
using service_testing::CommandOutcome;
using service_testing::ServeProcess;
using service_testing::TestDirectory;

constexpr char kToken[] = "correct-horse-battery-staple";

CommandOutcome Softwire(const std::string& args) {
  return service_testing::RunSoftwire(SOFTWIRE_BINARY, args);
}

// grpc.health.v1.Health/Check with an empty request: the response's serialized bytes.
grpc::Status CheckHealth(const std::string& address, std::string* response_bytes) {
  grpc::GenericStub stub(rpc::CreateClientChannel(address, rpc::ClientSecurity()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  // HealthCheckRequest{service: ""} serializes to nothing: one empty slice.
  grpc::Slice nothing(std::string(""));
  grpc::ByteBuffer request(&nothing, 1);
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(status); });
  grpc::Status status = done.get_future().get();
  std::vector<grpc::Slice> slices;
  if (status.ok() && response.Dump(&slices).ok()) {
    for (const grpc::Slice& slice : slices) {
      response_bytes->append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  return status;
}

// grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo with list_services: the
// response's bytes (the service names are in there as strings).
grpc::Status ListServicesByReflection(const std::string& address, std::string* response_bytes) {
  grpc::GenericStub stub(rpc::CreateClientChannel(address, rpc::ClientSecurity()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::CompletionQueue queue;
  auto call = stub.PrepareCall(
      &context, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &queue);
  auto step = [&queue](auto start) {
    start();
    void* tag = nullptr;
    bool ok = false;
    return queue.Next(&tag, &ok) && ok;
  };
  const std::string list_services("\x3a\x00", 2);  // Field 7 (list_services), "".
  grpc::Slice slice(list_services);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::Status status;
  const bool talked = step([&] { call->StartCall(reinterpret_cast<void*>(1)); }) &&
                      step([&] { call->Write(request, reinterpret_cast<void*>(2)); }) &&
                      step([&] { call->WritesDone(reinterpret_cast<void*>(3)); }) &&
                      step([&] { call->Read(&response, reinterpret_cast<void*>(4)); });
  step([&] { call->Finish(&status, reinterpret_cast<void*>(5)); });
  queue.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (queue.Next(&tag, &ok)) {
  }
  if (!talked && status.ok()) return grpc::Status(grpc::StatusCode::UNKNOWN, "no answer");
  std::vector<grpc::Slice> slices;
  if (response.Dump(&slices).ok()) {
    for (const grpc::Slice& part : slices) {
      response_bytes->append(reinterpret_cast<const char*>(part.begin()), part.size());
    }
  }
  return status;
}

class SecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = TestDirectory("security");
    token_file_ = directory_ + "/token";
    ASSERT_TRUE(WriteFileAtomically(token_file_, std::string(kToken) + "\n").ok());
    data_root_ = directory_ + "/data_root";
    ASSERT_TRUE(MakeDirectories(data_root_ + "/inside").ok());
  }

  std::string directory_;
  std::string token_file_;
  std::string data_root_;
};

TEST_F(SecurityTest, CallsWithoutTheTokenAreRefusedAndHealthAnswersAnyway) {
  ServeProcess server(SOFTWIRE_BINARY, {"--cluster", "1cpu", "--token-file", token_file_},
                      directory_ + "/state");
  ASSERT_TRUE(server.Start()) << server.Output();
  auto channel = rpc::CreateClientChannel(server.address(), rpc::ClientSecurity());
  auto jobs = proto::JobService::NewStub(channel);
  auto diagnostics = proto::Diagnostics::NewStub(channel);
  {
    grpc::ClientContext context;
    proto::ListJobsResponse response;
    grpc::Status status = jobs->ListJobs(&context, proto::ListJobsRequest(), &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  }
  {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer not-the-token");
    proto::SubmitJobRequest request;
    request.mutable_submission()->set_job_text(cli_testing::kTinyJob);
    proto::SubmitJobResponse response;
    grpc::Status status = jobs->SubmitJob(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  }
  {
    grpc::ClientContext context;
    proto::GetWaitStatesRequest request;
    request.set_job_id("job-1");
    proto::GetWaitStatesResponse response;
    grpc::Status status = diagnostics->GetWaitStates(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  }
  std::string health;
  grpc::Status healthy = CheckHealth(server.address(), &health);
  ASSERT_TRUE(healthy.ok()) << healthy.error_message();
  EXPECT_EQ(health, std::string("\x08\x01", 2)) << "status: SERVING";
  std::string services;
  grpc::Status reflected = ListServicesByReflection(server.address(), &services);
  ASSERT_TRUE(reflected.ok()) << reflected.error_message();
  EXPECT_TRUE(Contains(services, "softwire.proto.JobService")) << services;
  EXPECT_TRUE(Contains(services, "softwire.proto.Diagnostics")) << services;

  // With the token everything works, from the library and from the command line.
  service::JobClient client(ClientFor(server.address(), kToken));
  StatusOr<std::vector<proto::JobInfo>> listed = client.ListJobs();
  EXPECT_TRUE(listed.ok()) << listed.status();
  const std::string job = directory_ + "/tiny.pbtxt";
  ASSERT_TRUE(WriteFileAtomically(job, cli_testing::kTinyJob).ok());
  CommandOutcome without = Softwire("submit " + job + " --to " + server.address());
  EXPECT_EQ(without.exit_code, 1) << without.output;
  EXPECT_TRUE(Contains(without.output, "token")) << without.output;
  CommandOutcome with =
      Softwire("submit " + job + " --to " + server.address() + " --token-file " + token_file_);
  EXPECT_EQ(with.exit_code, 0) << with.output;
}

TEST_F(SecurityTest, DataPathsOutsideTheDataRootAreRefusedBeforeAnythingRuns) {
  // The job's samples: x under the data root, labels elsewhere, each reached several ways.
  const std::string outside = directory_ + "/outside";
  ASSERT_TRUE(MakeDirectories(outside).ok());
  std::vector<float> x(16 * 4, 0.5f);
  std::vector<int32_t> labels(16, 1);
  ASSERT_TRUE(
      WriteNpy(data_root_ + "/inside/x.npy", DType::kFloat32, Shape({16, 4}), x.data()).ok());
  ASSERT_TRUE(
      WriteNpy(data_root_ + "/inside/labels.npy", DType::kInt32, Shape({16}), labels.data()).ok());
  ASSERT_TRUE(WriteNpy(outside + "/labels.npy", DType::kInt32, Shape({16}), labels.data()).ok());
  std::filesystem::create_symlink(outside, data_root_ + "/link_out");

  ServeProcess server(SOFTWIRE_BINARY, {"--cluster", "1cpu", "--data-root", data_root_},
                      directory_ + "/state");
  ASSERT_TRUE(server.Start()) << server.Output();
  service::JobClient client(ClientFor(server.address()));
  auto job_reading = [](const std::string& labels_path) {
    std::string job = cli_testing::kTinyJob;
    const std::string synthetic = "synthetic { seed: 7 int_high: 3 }";
    job.replace(job.find(synthetic), synthetic.size(),
                "npy { path: \"inside/x.npy\" path: \"" + labels_path + "\" }");
    proto::JobSubmission submission;
    submission.set_job_text(job);
    submission.set_file_name("reader.pbtxt");
    submission.mutable_settings()->set_steps(2);
    return submission;
  };
  for (const std::string& path : {std::string("../outside/labels.npy"), outside + "/labels.npy",
                                  std::string("link_out/labels.npy")}) {
    SCOPED_TRACE(path);
    StatusOr<proto::SubmitJobResponse> refused = client.Submit(job_reading(path));
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << refused.status();
    EXPECT_TRUE(Contains(refused.status().message(), "labels.npy")) << refused.status();
  }
  StatusOr<std::vector<proto::JobInfo>> none = client.ListJobs();
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty()) << "nothing refused was recorded";
  // Inside the root it runs.
  StatusOr<proto::SubmitJobResponse> inside = client.Submit(job_reading("inside/labels.npy"));
  ASSERT_TRUE(inside.ok()) << inside.status();
  EXPECT_EQ(
      service_testing::WaitForState(&client, inside->job().job_id(), proto::JOB_STATE_SUCCEEDED, 60)
          .state(),
      proto::JOB_STATE_SUCCEEDED);
}

TEST_F(SecurityTest, UploadsOverTheLimitsAreRefused) {
  ServeProcess server(
      SOFTWIRE_BINARY,
      {"--cluster", "1cpu", "--max-upload-bytes", "1000", "--max-job-bytes", "100000"},
      directory_ + "/state");
  ASSERT_TRUE(server.Start()) << server.Output();
  service::JobClient client(ClientFor(server.address()));
  proto::JobSubmission submission = service_testing::TinySubmission(2);
  proto::DataFile* file = submission.add_data_file();
  file->set_path("data/unused.bin");
  file->set_content(std::string(2000, 'x'));
  StatusOr<proto::SubmitJobResponse> over = client.Submit(submission);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted) << over.status();
  // Far past the limits, the message itself is refused before the manager sees it.
  file->set_content(std::string(3 << 20, 'x'));
  StatusOr<proto::SubmitJobResponse> huge = client.Submit(submission);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted) << huge.status();
  // And the server goes on.
  StatusOr<proto::SubmitJobResponse> fine = client.Submit(service_testing::TinySubmission(2));
  EXPECT_TRUE(fine.ok()) << fine.status();
}

TEST_F(SecurityTest, AWideAddressNeedsTlsAndAToken) {
  CommandOutcome plain =
      Softwire("serve --listen 0.0.0.0:0 --state-dir " + directory_ + "/state_wide");
  EXPECT_EQ(plain.exit_code, 2) << plain.output;
  EXPECT_TRUE(Contains(plain.output, "--tls-cert")) << plain.output;
  EXPECT_TRUE(Contains(plain.output, "--token-file")) << plain.output;
  CommandOutcome tokenless = Softwire("serve --listen 0.0.0.0:0 --tls-cert a.pem --tls-key b.pem " +
                                      std::string("--state-dir ") + directory_ + "/state_wide");
  EXPECT_EQ(tokenless.exit_code, 2) << tokenless.output;
}

TEST_F(SecurityTest, TlsWithASelfSignedCertificateWorksEndToEnd) {
  if (system("command -v openssl >/dev/null 2>&1") != 0) GTEST_SKIP() << "no openssl";
  const std::string cert = directory_ + "/cert.pem";
  const std::string key = directory_ + "/key.pem";
  const std::string make =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
      "-addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout " +
      key + " -out " + cert + " >/dev/null 2>&1";
  ASSERT_EQ(system(make.c_str()), 0);
  ServeProcess server(
      SOFTWIRE_BINARY,
      {"--cluster", "1cpu", "--tls-cert", cert, "--tls-key", key, "--token-file", token_file_},
      directory_ + "/state");
  ASSERT_TRUE(server.Start()) << server.Output();
  const std::string job = directory_ + "/tiny.pbtxt";
  ASSERT_TRUE(WriteFileAtomically(job, cli_testing::kTinyJob).ok());
  CommandOutcome submitted = Softwire("submit " + job + " --to " + server.address() + " --tls-ca " +
                                      cert + " --token-file " + token_file_);
  EXPECT_EQ(submitted.exit_code, 0) << submitted.output;
  EXPECT_TRUE(Contains(submitted.output, "done: 4 steps")) << submitted.output;
  CommandOutcome plaintext =
      Softwire("jobs --to " + server.address() + " --token-file " + token_file_);
  EXPECT_EQ(plaintext.exit_code, 1) << plaintext.output;
}

}  // namespace
}  // namespace softwire
