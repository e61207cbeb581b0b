// WebServer on a free loopback port over a real JobManager (cpu devices, a temporary state
// directory), asked with httplib's client: the pages and JSON, a job submitted as the jobs
// page's form sends it, its event feed resumed from Last-Event-ID with no gap and no repeat,
// its timeline, live diagnosis and cancel of a running job, and the refusals: without the token, a
// foreign Host, a POST without the page's header, a wide address without TLS.
#include "service/web/web_server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "proto/testing/classifier_job_text.h"

namespace softwire {
namespace service {
namespace {

// cli_testing::kTinyJob, wider, one micro-batch of 4 per step, 12 steps.
std::string TinyJob() {
  proto_testing::ClassifierJob job;
  job.features = 8;
  job.classes = 4;
  job.data_seed = 3;
  job.weight_seed = 2;
  job.steps = 12;
  job.micro_batch_size = 4;
  job.micro_batches_per_step = 1;
  return proto_testing::ClassifierJobText(job);
}

// (sequence, kind) of each message of an SSE body.
std::vector<std::pair<int64_t, std::string>> SseEvents(const std::string& body) {
  std::vector<std::pair<int64_t, std::string>> events;
  size_t at = 0;
  while (at < body.size()) {
    size_t end = body.find("\n\n", at);
    if (end == std::string::npos) end = body.size();
    const std::string block = body.substr(at, end - at);
    at = end + 2;
    const size_t id = block.find("id: "), data = block.find("data: ");
    if (id == std::string::npos || data == std::string::npos) continue;
    const nlohmann::json json = nlohmann::json::parse(block.substr(data + 6));
    events.emplace_back(std::stoll(block.substr(id + 4)), json.value("kind", ""));
  }
  return events;
}

class WebServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = ::testing::TempDir() + "/web_server_test_" + std::to_string(getpid());
    std::filesystem::remove_all(state_);
    JobManagerOptions options;
    options.state_directory = state_;
    StatusOr<std::unique_ptr<JobManager>> jobs = JobManager::Start(std::move(options));
    ASSERT_TRUE(jobs.ok()) << jobs.status();
    jobs_ = std::move(*jobs);
  }
  void TearDown() override {
    web_.reset();
    jobs_.reset();
    std::filesystem::remove_all(state_);
  }

  void StartWeb(const std::string& token = "") {
    WebServerOptions options;
    options.address = "127.0.0.1:0";
    options.token = token;
    StatusOr<std::unique_ptr<WebServer>> web = WebServer::Start(jobs_.get(), options);
    ASSERT_TRUE(web.ok()) << web.status();
    web_ = std::move(*web);
  }

  httplib::Client Client() {
    httplib::Client client("127.0.0.1", web_->port());
    client.set_read_timeout(60, 0);
    return client;
  }

  // Submits TinyJob() with tracing as the jobs page's form does; its job id.
  std::string SubmitTiny(httplib::Client& client) {
    httplib::MultipartFormDataItems form = {{"job", TinyJob(), "tiny.pbtxt", "text/plain"},
                                            {"trace", "1", "", ""}};
    httplib::Result result = client.Post("/api/jobs", {{"X-Softwire-Request", "1"}}, form);
    EXPECT_TRUE(result) << httplib::to_string(result.error());
    if (!result) return "";
    EXPECT_EQ(result->status, 201) << result->body;
    return nlohmann::json::parse(result->body)["job"]["job_id"];
  }

  void WaitUntilEnded(const std::string& job_id) {
    for (;;) {
      StatusOr<std::vector<proto::JobEvent>> events =
          jobs_->WaitForEvents(job_id, 1, std::chrono::milliseconds(0));
      ASSERT_TRUE(events.ok());
      const proto::JobEvent& last = events->back();
      if (last.has_finished() || last.has_failed() || last.has_cancelled()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  std::string state_;
  std::unique_ptr<JobManager> jobs_;
  std::unique_ptr<WebServer> web_;
};

TEST_F(WebServerTest, ServesThePagesFromTheBinary) {
  StartWeb();
  httplib::Client client = Client();
  for (const char* page : {"/", "/job.html", "/timeline.html", "/devices.html", "/common.js"}) {
    httplib::Result result = client.Get(page);
    ASSERT_TRUE(result) << page;
    EXPECT_EQ(result->status, 200) << page;
    EXPECT_FALSE(result->body.empty()) << page;
  }
  httplib::Result index = client.Get("/");
  EXPECT_NE(index->body.find("<title>softwire"), std::string::npos);
  EXPECT_EQ(index->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(client.Get("/nothing.html")->status, 404);
  EXPECT_EQ(client.Get("/../CMakeLists.txt")->status, 404);
}

TEST_F(WebServerTest, ASubmittedJobsFeedResumesAfterLastEventIdWithoutGaps) {
  StartWeb();
  httplib::Client client = Client();
  const std::string job_id = SubmitTiny(client);
  ASSERT_FALSE(job_id.empty());
  WaitUntilEnded(job_id);

  httplib::Result whole = client.Get("/api/jobs/" + job_id + "/events");
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->get_header_value("Content-Type"), "text/event-stream");
  const auto all = SseEvents(whole->body);
  ASSERT_GE(all.size(), 15u);  // compiled, queued, started, 12 steps, finished
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].first, static_cast<int64_t>(i) + 1);
  EXPECT_EQ(all.back().second, "finished");
  EXPECT_NE(whole->body.find("event: end"), std::string::npos);

  // A page that saw event 7 reconnects: it gets 8 onward, nothing twice.
  httplib::Result rest = client.Get("/api/jobs/" + job_id + "/events", {{"Last-Event-ID", "7"}});
  ASSERT_TRUE(rest);
  const auto resumed = SseEvents(rest->body);
  ASSERT_EQ(resumed.size(), all.size() - 7);
  EXPECT_EQ(resumed.front().first, 8);
  EXPECT_EQ(resumed.back(), all.back());

  nlohmann::json steps = nlohmann::json::parse(client.Get("/api/jobs/" + job_id + "/steps")->body);
  ASSERT_EQ(steps["steps"].size(), 12u);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(steps["steps"][i]["step"], i);

  nlohmann::json listed = nlohmann::json::parse(client.Get("/api/jobs")->body);
  ASSERT_EQ(listed["jobs"].size(), 1u);
  EXPECT_EQ(listed["jobs"][0]["state"], "succeeded");
  EXPECT_EQ(listed["jobs"][0]["completed_steps"], 12);

  httplib::Result timeline = client.Get("/api/jobs/" + job_id + "/trace?steps=2:4");
  ASSERT_TRUE(timeline);
  ASSERT_EQ(timeline->status, 200) << timeline->body;
  nlohmann::json trace = nlohmann::json::parse(timeline->body);
  EXPECT_EQ(trace["job_name"], "tiny");
  EXPECT_FALSE(trace["firings"]["actor"].empty());
  for (const auto& step : trace["firings"]["step"]) {
    EXPECT_TRUE(step.get<int64_t>() == 2 || step.get<int64_t>() == 3) << step;
  }
}

TEST_F(WebServerTest, ErrorsNameTheFaultWithTheirHttpStatus) {
  StartWeb();
  httplib::Client client = Client();
  httplib::Result unknown = client.Get("/api/jobs/job-99");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(nlohmann::json::parse(unknown->body)["code"], "NOT_FOUND");
  httplib::MultipartFormDataItems bad = {{"job", "name: 'x' op { type: 'nope' }", "x.pbtxt", ""}};
  httplib::Result refused = client.Post("/api/jobs", {{"X-Softwire-Request", "1"}}, bad);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400);
  EXPECT_NE(nlohmann::json::parse(refused->body)["error"].get<std::string>().find("x.pbtxt"),
            std::string::npos)
      << refused->body;
  // Cancelling a job that ended returns it as it is.
  const std::string job_id = SubmitTiny(client);
  WaitUntilEnded(job_id);
  httplib::Result cancelled =
      client.Post("/api/jobs/" + job_id + "/cancel", {{"X-Softwire-Request", "1"}}, "", "");
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->status, 200);
  EXPECT_EQ(nlohmann::json::parse(cancelled->body)["state"], "succeeded");
}

TEST_F(WebServerTest, DiagnosesARunningJobAndCancelsIt) {
  StartWeb();
  httplib::Client client = Client();
  httplib::MultipartFormDataItems form = {{"job", TinyJob(), "tiny.pbtxt", ""},
                                          {"steps", "100000000", "", ""}};
  httplib::Result submitted = client.Post("/api/jobs", {{"X-Softwire-Request", "1"}}, form);
  ASSERT_TRUE(submitted);
  ASSERT_EQ(submitted->status, 201) << submitted->body;
  const std::string job_id = nlohmann::json::parse(submitted->body)["job"]["job_id"];
  const std::string path = "/api/jobs/" + job_id;
  // Queued, compiled, then running with its actors started: asked until it answers.
  httplib::Result diagnosis = client.Get(path + "/diagnosis");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (diagnosis && diagnosis->status == 409 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    diagnosis = client.Get(path + "/diagnosis");
  }
  ASSERT_TRUE(diagnosis);
  ASSERT_EQ(diagnosis->status, 200) << diagnosis->body;
  const nlohmann::json waits = nlohmann::json::parse(diagnosis->body);
  EXPECT_GT(waits["actors"].get<int64_t>(), 0);
  EXPECT_FALSE(waits["waits"].empty());
  EXPECT_FALSE(waits["waits"][0]["name"].get<std::string>().empty());

  httplib::Result cancelled = client.Post(path + "/cancel", {{"X-Softwire-Request", "1"}}, "", "");
  ASSERT_TRUE(cancelled);
  ASSERT_EQ(cancelled->status, 200) << cancelled->body;
  EXPECT_EQ(nlohmann::json::parse(cancelled->body)["state"], "cancelled");
  httplib::Result after = client.Get(path + "/diagnosis");
  EXPECT_EQ(after->status, 409) << after->body;         // FAILED_PRECONDITION: not running
  EXPECT_EQ(client.Get(path + "/trace")->status, 404);  // Not traced.
}

TEST_F(WebServerTest, RefusesRequestsWithoutTheTokenAForeignHostOrThePagesHeader) {
  StartWeb("s3cret");
  httplib::Client client = Client();
  httplib::Result without = client.Get("/api/jobs");
  ASSERT_TRUE(without);
  EXPECT_EQ(without->status, 401);
  EXPECT_EQ(client.Get("/api/jobs", {{"Authorization", "Bearer wrong"}})->status, 401);
  EXPECT_EQ(client.Get("/api/jobs", {{"Authorization", "Bearer s3cret"}})->status, 200);
  EXPECT_EQ(client.Get("/api/jobs/feed")->status, 401);
  EXPECT_EQ(client.Get("/")->status, 200);  // The page, which asks for the token.
  // A change needs the pages' header too.
  EXPECT_EQ(
      client.Post("/api/jobs/job-1/cancel", {{"Authorization", "Bearer s3cret"}}, "", "")->status,
      403);
  web_.reset();

  StartWeb();
  httplib::Client open = Client();
  EXPECT_EQ(open.Get("/api/jobs", {{"Host", "rebound.example:80"}})->status, 403);
  EXPECT_EQ(open.Get("/api/jobs")->status, 200);
}

TEST_F(WebServerTest, AWideAddressNeedsTlsAndAToken) {
  WebServerOptions options;
  options.address = "0.0.0.0:0";
  options.token = "s3cret";
  StatusOr<std::unique_ptr<WebServer>> web = WebServer::Start(jobs_.get(), options);
  ASSERT_FALSE(web.ok());
  EXPECT_EQ(web.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(web.status().message().find("TLS"), std::string::npos) << web.status();
  options.tls_certificate = "not a certificate";
  options.tls_private_key = "not a key";
  web = WebServer::Start(jobs_.get(), options);
  ASSERT_FALSE(web.ok());
  EXPECT_NE(web.status().message().find("does not parse"), std::string::npos) << web.status();
}

TEST_F(WebServerTest, StopsPromptlyWithFeedsOpen) {
  StartWeb();
  std::thread reader([port = web_->port()] {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(30, 0);
    client.Get("/api/jobs/feed");  // Ends when the server stops.
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto began = std::chrono::steady_clock::now();
  web_.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(3));
  reader.join();
}

}  // namespace
}  // namespace service
}  // namespace softwire
