#include "cli/job_feed.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "base/file.h"
#include "base/format_bytes.h"
#include "cli/commands.h"
#include "cli/step_output.h"

namespace softwire {
namespace cli {
namespace {

// What a JobRestarted event says, in one line: the lost node and the checkpoint while it waits
// for devices, the new layout once it runs again.
std::string RestartLine(const proto::JobRestarted& restarted) {
  const std::string from = restarted.resumed_from_step() > 0
                               ? "step " + std::to_string(restarted.resumed_from_step()) + " (" +
                                     restarted.checkpoint() + ")"
                               : "step 0 (no checkpoint)";
  const std::string which =
      std::to_string(restarted.restart()) + " of " + std::to_string(restarted.max_restarts());
  if (restarted.device().empty()) {
    return "node '" + restarted.lost_node() + "' was lost: restart " + which + " from " + from +
           ", waiting up to " + std::to_string(static_cast<int>(restarted.wait_seconds())) +
           " s for devices on live nodes";
  }
  std::string devices;
  for (const std::string& device : restarted.device()) {
    devices += (devices.empty() ? "" : ", ") + device;
  }
  return "restarted (" + which + ") from " + from + " on " + devices;
}

using Clock = std::chrono::steady_clock;

runtime::StepResult StepResultOf(const proto::StepMetrics& metrics) {
  runtime::StepResult step;
  step.step = metrics.step();
  step.loss = metrics.loss();
  step.outputs.insert(metrics.metric().begin(), metrics.metric().end());
  step.seconds = metrics.seconds();
  step.samples_per_second = metrics.samples_per_second();
  return step;
}

// One line rewritten in place:
//   step   12/100 [#####                ]  loss 0.412331  5123 samples/s  3.2 s left
class ProgressBar {
 public:
  explicit ProgressBar(int64_t total_steps) : total_steps_(std::max<int64_t>(total_steps, 1)) {}

  void OnStep(const proto::StepMetrics& step) {
    elapsed_ += step.seconds();
    const int64_t done = step.step() + 1;
    // At most ten redraws a second, and always the last step's.
    const Clock::time_point now = Clock::now();
    if (drawn_ && done < total_steps_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    const int filled =
        static_cast<int>(kWidth * std::min<int64_t>(done, total_steps_) / total_steps_);
    const double left = done > 0 ? elapsed_ / done * std::max<int64_t>(total_steps_ - done, 0) : 0;
    std::string bar(filled, '#');
    bar.resize(kWidth, ' ');
    char line[256];
    int length = std::snprintf(line, sizeof(line), "\rstep %*lld/%lld [%s]", Digits(),
                               static_cast<long long>(done), static_cast<long long>(total_steps_),
                               bar.c_str());
    if (!std::isnan(step.loss()) && length > 0 && length < static_cast<int>(sizeof(line))) {
      length += std::snprintf(line + length, sizeof(line) - length, "  loss %.6f", step.loss());
    }
    if (length > 0 && length < static_cast<int>(sizeof(line))) {
      std::snprintf(line + length, sizeof(line) - length, "  %.0f samples/s  %.1f s left  ",
                    step.samples_per_second(), left);
    }
    std::fputs(line, stdout);
    std::fflush(stdout);
    drawn_ = true;
  }

  // Ends the bar's line so what follows starts on a line of its own.
  void Finish() {
    if (drawn_) std::fputs("\n", stdout);
    drawn_ = false;
  }

 private:
  static constexpr int kWidth = 24;
  int Digits() const { return static_cast<int>(std::to_string(total_steps_).size()); }

  const int64_t total_steps_;
  double elapsed_ = 0;
  bool drawn_ = false;
  Clock::time_point last_draw_;
};

// Prints one job's events as they come and gathers what the command needs at the end.
class FeedPrinter {
 public:
  FeedPrinter(const FeedOptions& options, const proto::JobInfo& job)
      : options_(options), job_(job) {
    outcome_.job_name = job.name();
    StartSteps(job.plan());
  }

  void OnEvent(const proto::JobEvent& event) {
    switch (event.kind_case()) {
      case proto::JobEvent::kQueued:
        if (event.queued().position() > 0 && !options_.quiet) {
          std::printf("%s queued behind %lld other jobs\n", job_.job_id().c_str(),
                      static_cast<long long>(event.queued().position()));
          std::fflush(stdout);
        }
        break;
      case proto::JobEvent::kCompiled:
        StartSteps(event.compiled());
        PrintHeader(event.compiled());
        break;
      case proto::JobEvent::kStep:
        OnStep(event.step());
        break;
      case proto::JobEvent::kCheckpoint:
        if (!options_.quiet) {
          EndBar();
          std::printf("checkpoint after step %lld: %s\n",
                      static_cast<long long>(event.checkpoint().step()),
                      event.checkpoint().path().c_str());
        }
        break;
      case proto::JobEvent::kRestarted:
        if (!options_.quiet) {
          EndBar();
          std::printf("%s\n", RestartLine(event.restarted()).c_str());
          std::fflush(stdout);
        }
        break;
      case proto::JobEvent::kFinished:
        EndBar();
        outcome_.state = proto::JOB_STATE_SUCCEEDED;
        if (!options_.quiet) PrintDone(event.finished());
        break;
      case proto::JobEvent::kFailed:
        EndBar();
        outcome_.state = proto::JOB_STATE_FAILED;
        outcome_.error = event.failed().error();
        break;
      case proto::JobEvent::kCancelled:
        EndBar();
        outcome_.state = proto::JOB_STATE_CANCELLED;
        outcome_.error = event.cancelled().reason();
        break;
      default:
        break;
    }
  }

  bool ended() const { return outcome_.state != proto::JOB_STATE_UNSPECIFIED; }
  const FeedOutcome& outcome() const { return outcome_; }
  // One line per step: a step run again after a restart replaces the lost run's line.
  std::string metrics() const {
    std::string text;
    for (const auto& [step, line] : metrics_) text += line;
    return text;
  }
  void EndBar() {
    if (bar_ != nullptr) bar_->Finish();
  }

 private:
  void StartSteps(const proto::PlanSummary& plan) {
    if (plan.steps() <= 0) return;
    loss_name_ = plan.loss();
    printer_ =
        std::make_unique<ProgressPrinter>(stdout, plan.steps(), options_.log_every, loss_name_);
    bar_ = std::make_unique<ProgressBar>(plan.steps());
  }

  // "job 'tiny' (job-3): 7 actors on node0/cpu:0 (1.2 KiB); 4 steps of 16 samples"
  void PrintHeader(const proto::PlanSummary& plan) {
    if (options_.quiet || header_printed_) return;
    header_printed_ = true;
    std::string devices;
    for (const proto::PlannedDevice& device : plan.device()) {
      if (!devices.empty()) devices += ", ";
      devices += device.device() + " (" + FormatBytes(device.planned_bytes()) + ")";
    }
    std::printf("job '%s' (%s): %lld actors on %s; %lld steps of %lld samples\n",
                job_.name().c_str(), job_.job_id().c_str(), static_cast<long long>(plan.actors()),
                devices.c_str(), static_cast<long long>(plan.steps()),
                static_cast<long long>(plan.samples_per_step()));
    std::fflush(stdout);
  }

  void OnStep(const proto::StepMetrics& step) {
    const runtime::StepResult result = StepResultOf(step);
    metrics_[step.step()] = MetricsJsonLine(result) + "\n";
    if (options_.quiet) return;
    if (printer_ == nullptr) StartSteps(job_.plan());
    if (options_.progress_bar && bar_ != nullptr) {
      bar_->OnStep(step);
    } else if (printer_ != nullptr) {
      printer_->OnStep(result);
    }
  }

  // "done: 10 steps in 1.23 s, 2081 samples/s, final loss 0.123456", as `softwire run`.
  void PrintDone(const proto::JobFinished& finished) {
    std::printf("done: %lld steps in %.2f s, %.0f samples/s",
                static_cast<long long>(finished.steps()), finished.seconds(),
                finished.samples_per_second());
    if (finished.has_last_step() && !loss_name_.empty()) {
      std::printf(", final loss %.6f", finished.last_step().loss());
    }
    std::printf("\n");
    std::fflush(stdout);
  }

  const FeedOptions& options_;
  const proto::JobInfo job_;
  std::string loss_name_;
  std::unique_ptr<ProgressPrinter> printer_;
  std::unique_ptr<ProgressBar> bar_;
  bool header_printed_ = false;
  std::map<int64_t, std::string> metrics_;  // By step.
  FeedOutcome outcome_;
};

// Errors after which the same watch may well work again: the server restarting, a connection
// reset.
bool IsWorthRetrying(const Status& status) {
  switch (status.code()) {
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kAborted:
    case StatusCode::kInternal:
      return true;
    default:
      return false;
  }
}

// Watches until the feed ends, reconnecting from the next event when the stream breaks.
Status WatchToTheEnd(service::JobClient* client, const std::string& job_id,
                     const FeedOptions& options, FeedPrinter* printer) {
  int64_t next = options.from_sequence;
  Clock::time_point last_contact = Clock::now();
  double backoff = 0.1;
  bool told = false;
  while (true) {
    Status watched = client->Watch(job_id, next, [&](const proto::JobEvent& event) {
      printer->OnEvent(event);
      next = event.sequence() + 1;
      last_contact = Clock::now();
      backoff = 0.1;
      told = false;
      return true;
    });
    if (printer->ended()) return Status::Ok();
    if (watched.ok()) watched = UnavailableError("the watch ended before the job did");
    if (!IsWorthRetrying(watched)) return watched;
    const double silent = std::chrono::duration<double>(Clock::now() - last_contact).count();
    if (silent > kReconnectSeconds) {
      return watched.WithContext("no answer for " + std::to_string(static_cast<int>(silent)) +
                                 " s");
    }
    if (!told && !options.quiet) {
      printer->EndBar();
      std::fprintf(stderr, "softwire %s: %s; watching again from event %lld\n",
                   options.command.c_str(), watched.message().c_str(),
                   static_cast<long long>(next));
      told = true;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(backoff));
    backoff = std::min(backoff * 2, 2.0);
  }
}

}  // namespace

Status CheckMetricsOutput(const std::string& path) {
  if (path.empty()) return Status::Ok();
  const std::string probe = path + ".probe.tmp." + std::to_string(::getpid());
  if (!WriteFileAtomically(probe, "").ok()) {
    return InvalidArgumentError("--metrics-out: cannot write into '" + DirectoryOf(path) + "'");
  }
  std::remove(probe.c_str());
  return Status::Ok();
}

StatusOr<FeedOutcome> FollowJob(service::JobClient* client, const std::string& job_id,
                                const FeedOptions& options) {
  SOFTWIRE_ASSIGN_OR_RETURN(proto::JobInfo job, client->GetJob(job_id));
  FeedPrinter printer(options, job);
  Status watched = WatchToTheEnd(client, job_id, options, &printer);
  printer.EndBar();
  if (!options.metrics_out.empty()) {
    Status written = WriteFileAtomically(options.metrics_out, printer.metrics());
    if (!written.ok()) return written.WithContext("--metrics-out");
  }
  if (!watched.ok()) return watched;
  return printer.outcome();
}

int ReportOutcome(const std::string& command, const std::string& job_id,
                  const FeedOutcome& outcome) {
  switch (outcome.state) {
    case proto::JOB_STATE_SUCCEEDED:
      return kExitSuccess;
    case proto::JOB_STATE_CANCELLED:
      std::fprintf(stderr, "softwire %s: job '%s' (%s) was cancelled: %s\n", command.c_str(),
                   outcome.job_name.c_str(), job_id.c_str(), outcome.error.c_str());
      return kExitRunFailed;
    default:
      std::fprintf(stderr, "softwire %s: job '%s' (%s) failed: %s\n", command.c_str(),
                   outcome.job_name.c_str(), job_id.c_str(), outcome.error.c_str());
      return kExitRunFailed;
  }
}

}  // namespace cli
}  // namespace softwire
