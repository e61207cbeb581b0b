#include "service/web/event_streams.h"

#include <nlohmann/json.hpp>

#include "base/thread_name.h"
#include "service/web/web_json.h"

namespace softwire {
namespace service {
namespace {

bool ParseSequence(const std::string& text, int64_t* value) {
  if (text.empty() || text.size() > 15) return false;
  int64_t parsed = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    parsed = parsed * 10 + (c - '0');
  }
  *value = parsed;
  return true;
}

bool IsTerminalEvent(const proto::JobEvent& event) {
  return event.has_finished() || event.has_failed() || event.has_cancelled();
}

}  // namespace

std::string SseMessage(int64_t id, const std::string& event, const std::string& data) {
  return "id: " + std::to_string(id) + "\nevent: " + event + "\ndata: " + data + "\n\n";
}

int64_t ResumeAfter(const std::string& last_event_id, const std::string& from) {
  int64_t value = 0;
  if (ParseSequence(last_event_id, &value)) return value;
  if (ParseSequence(from, &value) && value >= 1) return value - 1;
  return 0;
}

JobEventStream::JobEventStream(JobManager* jobs, std::string job_id, int64_t after,
                               const std::atomic<bool>* stopping)
    : jobs_(jobs),
      job_id_(std::move(job_id)),
      stopping_(stopping),
      next_sequence_(after + 1),
      last_write_(std::chrono::steady_clock::now()) {}

bool JobEventStream::Next(const StreamWrite& write) {
  if (*stopping_) return false;
  if (step_in_last_burst_) {
    // What came after a step goes out at most every kEventBurst, in one burst.
    const auto due = last_write_ + kEventBurst;
    if (std::chrono::steady_clock::now() < due) std::this_thread::sleep_until(due);
  }
  StatusOr<std::vector<proto::JobEvent>> events =
      jobs_->WaitForEvents(job_id_, next_sequence_, kStreamPoll);
  if (!events.ok()) {
    write("event: error\ndata: " + nlohmann::json(events.status().message()).dump() + "\n\n");
    return false;
  }
  if (events->empty()) {
    if (std::chrono::steady_clock::now() - last_write_ < kKeepAlive) return true;
    last_write_ = std::chrono::steady_clock::now();
    return write(": keep-alive\n\n");
  }
  std::string burst;
  bool ended = false;
  step_in_last_burst_ = false;
  for (const proto::JobEvent& event : *events) {
    burst += SseMessage(event.sequence(), "job", JobEventJson(event).dump());
    step_in_last_burst_ |= event.has_step();
    ended |= IsTerminalEvent(event);
    next_sequence_ = event.sequence() + 1;
  }
  if (ended) burst += "event: end\ndata: {}\n\n";
  last_write_ = std::chrono::steady_clock::now();
  return write(burst) && !ended;
}

JobsFeed::JobsFeed(JobManager* jobs) : jobs_(jobs), poller_([this] { Poll(); }) {}

JobsFeed::~JobsFeed() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  poller_.join();
}

std::string JobsFeed::Snapshot() const {
  nlohmann::json jobs = nlohmann::json::array();
  for (const proto::JobInfo& job : jobs_->ListJobs({}, kJobsFeedLimit)) {
    nlohmann::json entry = JobInfoJson(job);
    entry.erase("plan");  // The list needs only the samples per step of the plan.
    entry["samples_per_step"] = job.plan().samples_per_step();
    jobs.push_back(std::move(entry));
  }
  return nlohmann::json{{"jobs", jobs}, {"queued", jobs_->QueuedJobs()}}.dump();
}

void JobsFeed::Poll() {
  NameCurrentThread("sw:web/jobs");
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    changed_.wait(lock, [this] { return stopping_ || readers_ > 0; });
    if (stopping_) break;
    lock.unlock();
    std::string text = Snapshot();
    lock.lock();
    if (text != text_) {
      text_ = std::move(text);
      ++version_;
      changed_.notify_all();
    }
    changed_.wait_for(lock, kJobsPoll, [this] { return stopping_; });
  }
}

void JobsFeed::Serve(const StreamWrite& write, const std::atomic<bool>* stopping) {
  std::unique_lock<std::mutex> lock(mutex_);
  ++readers_;
  changed_.notify_all();
  int64_t sent = 0;
  auto last_write = std::chrono::steady_clock::now();
  while (!stopping_ && !*stopping) {
    if (version_ > sent) {
      const std::string message = SseMessage(version_, "jobs", text_);
      sent = version_;
      lock.unlock();
      const bool written = write(message);
      lock.lock();
      if (!written) break;
      last_write = std::chrono::steady_clock::now();
      continue;
    }
    changed_.wait_for(lock, kStreamPoll);
    if (std::chrono::steady_clock::now() - last_write >= kKeepAlive) {
      lock.unlock();
      const bool written = write(": keep-alive\n\n");
      lock.lock();
      if (!written) break;
      last_write = std::chrono::steady_clock::now();
    }
  }
  --readers_;
}

}  // namespace service
}  // namespace softwire
