// `softwire submit JOB.pbtxt --to ADDR`: sends a job to a `softwire serve`, with the data files
// it names beside it, and follows it to its end as `softwire run` would print it.
//
//   softwire submit demos/digits/digits.pbtxt --to 127.0.0.1:7070 --steps 200
//   softwire submit job.pbtxt --detach          # prints the job id and returns
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/file.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/flag_parser.h"
#include "cli/interrupt_watcher.h"
#include "cli/job_feed.h"
#include "cli/parallel_flags.h"
#include "cli/server_connection.h"
#include "compiler/compiler.h"
#include "data/data_root.h"
#include "trace/trace_recorder.h"

namespace softwire {
namespace cli {
namespace {

// Submissions retried when the server could not be reached (with the same idempotency key).
constexpr int kSubmitAttempts = 5;

struct SubmitFlags {
  ServerFlags server;
  int64_t steps = 0;
  int64_t dp = 0;
  int64_t tp = 0;
  int64_t pp = 0;
  int64_t micro_batches = 0;
  int64_t devices = 0;
  bool trace = false;
  std::string trace_steps;
  double stall_timeout = 0;
  bool no_memory_reuse = false;
  bool no_views = false;
  bool no_in_place = false;
  int64_t checkpoint_every = 0;
  int64_t keep_checkpoints = 0;
  int64_t max_restarts = 0;
  double restart_wait = 0;
  std::string precision;
  bool no_upload = false;
  bool detach = false;
  std::string metrics_out;
  bool cancel_on_interrupt = false;
  bool quiet = false;
  int64_t log_every = 0;
  bool help = false;
};

FlagParser MakeParser(SubmitFlags* flags) {
  FlagParser parser;
  AddServerFlags(&parser, &flags->server);
  parser.AddInt("steps", &flags->steps, "N", "run N steps instead of the job's");
  parser.AddInt("dp", &flags->dp, "N", "data-parallel degree (over the job's)");
  parser.AddInt("tp", &flags->tp, "N", "tensor-parallel degree (over the job's)");
  parser.AddInt("pp", &flags->pp, "N", "pipeline stages (over the job's)");
  parser.AddInt("micro-batches", &flags->micro_batches, "M", "micro-batches per step");
  parser.AddInt("devices", &flags->devices, "N",
                "devices of the server to run on (default: the product of the degrees)");
  parser.AddBool("trace", &flags->trace,
                 "record the actor trace on the server (softwire fetch ID --trace FILE)");
  parser.AddString("trace-steps", &flags->trace_steps, "A:B", "trace only steps A..B-1");
  parser.AddDouble("stall-timeout", &flags->stall_timeout, "SECONDS",
                   "fail, saying what each actor waits for, when nothing ran this long (default "
                   "60)");
  parser.AddBool("no-memory-reuse", &flags->no_memory_reuse,
                 "every register keeps bytes of its own");
  parser.AddBool("no-views", &flags->no_views, "keep reshapes and transposes as copies");
  parser.AddBool("no-in-place", &flags->no_in_place, "give element-wise ops outputs of their own");
  parser.AddInt("checkpoint-every", &flags->checkpoint_every, "N",
                "save a checkpoint every N steps into the job's results (fetched with them)");
  parser.AddInt("keep-checkpoints", &flags->keep_checkpoints, "K",
                "keep the latest K checkpoints (default 3)");
  parser.AddInt("max-restarts", &flags->max_restarts, "N",
                "on a server with node agents: when a node of the job is lost, run it again on "
                "the live nodes from its latest checkpoint (step 0 without one), at most N times "
                "(default 0: a lost node fails the job)");
  parser.AddDouble("restart-wait", &flags->restart_wait, "SECONDS",
                   "how long a restart waits for enough devices on live nodes (default 60)");
  parser.AddString("precision", &flags->precision, "P",
                   "float32, bf16 or auto (bf16 where the server's cpu has it); overrides the "
                   "job's");
  parser.AddBool("no-upload", &flags->no_upload,
                 "send no data files: the job's data must be under the server's --data-root");
  parser.AddBool("detach", &flags->detach, "print the job's id once it is queued, and return");
  parser.AddString("metrics-out", &flags->metrics_out, "FILE",
                   "write one JSON object per step to FILE, as softwire run does");
  parser.AddBool("cancel-on-interrupt", &flags->cancel_on_interrupt,
                 "cancel the job on Ctrl-C (default: it keeps running)");
  parser.AddBool("quiet", &flags->quiet, "print nothing but errors");
  parser.AddInt("log-every", &flags->log_every, "N",
                "print a progress line every N steps (default: about 20 lines)");
  parser.AddBool("help", &flags->help, "show this help");
  return parser;
}

Status CheckFlags(const SubmitFlags& flags) {
  if (flags.steps < 0) return InvalidArgumentError("--steps must be at least 1");
  if (flags.dp < 0 || flags.tp < 0 || flags.pp < 0 || flags.micro_batches < 0 ||
      flags.devices < 0) {
    return InvalidArgumentError("--dp, --tp, --pp, --micro-batches and --devices must be >= 1");
  }
  if (flags.stall_timeout < 0) return InvalidArgumentError("--stall-timeout must be >= 0");
  if (flags.checkpoint_every < 0) {
    return InvalidArgumentError("--checkpoint-every must be at least 1");
  }
  if (flags.keep_checkpoints < 0 || flags.keep_checkpoints > 1000) {
    return InvalidArgumentError("--keep-checkpoints must be between 1 and 1000");
  }
  if (flags.max_restarts < 0 || flags.max_restarts > 1000) {
    return InvalidArgumentError("--max-restarts must be between 0 and 1000");
  }
  if (flags.restart_wait < 0) return InvalidArgumentError("--restart-wait must be >= 0");
  if (flags.restart_wait > 0 && flags.max_restarts == 0) {
    return InvalidArgumentError("--restart-wait needs --max-restarts N");
  }
  if (flags.keep_checkpoints > 0 && flags.checkpoint_every == 0) {
    return InvalidArgumentError("--keep-checkpoints needs --checkpoint-every N");
  }
  SOFTWIRE_RETURN_IF_ERROR(ParsePrecision(flags.precision).status());
  if (flags.log_every < 0) return InvalidArgumentError("--log-every must be at least 1");
  if (!flags.trace_steps.empty()) {
    if (!flags.trace) return InvalidArgumentError("--trace-steps needs --trace");
    StatusOr<trace::StepWindow> window = trace::ParseStepWindow(flags.trace_steps);
    if (!window.ok()) return window.status().WithContext("--trace-steps");
  }
  if (flags.detach && (!flags.metrics_out.empty() || flags.cancel_on_interrupt)) {
    return InvalidArgumentError(
        "--detach does not follow the job: --metrics-out and --cancel-on-interrupt need it "
        "followed (softwire fetch ID --metrics-out FILE)");
  }
  return Status::Ok();
}

// A fresh random key per invocation: 128 bits in hex.
std::string NewIdempotencyKey() {
  std::random_device random;
  std::string key;
  char hex[9];
  for (int i = 0; i < 4; ++i) {
    std::snprintf(hex, sizeof(hex), "%08x", static_cast<unsigned>(random()));
    key += hex;
  }
  return key;
}

// The relative data paths the job names: npy and text datasets, npy initializers.
std::vector<std::string> DataPaths(const proto::Job& job) {
  std::vector<std::string> paths;
  for (const proto::DataSource& source : job.source()) {
    if (source.has_npy())
      paths.insert(paths.end(), source.npy().path().begin(), source.npy().path().end());
    if (source.has_text()) paths.push_back(source.text().path());
  }
  for (const proto::Variable& variable : job.variable()) {
    if (variable.initializer().has_npy_path()) {
      paths.push_back(variable.initializer().npy_path());
    }
  }
  return paths;
}

// The data files beside the job that it names by a path staying inside its directory. Files
// that are not there are left to the server's data root (which says what is missing).
Status AddDataFiles(const std::string& job_path, proto::JobSubmission* submission) {
  StatusOr<compiler::JobFile> job = compiler::ParseJobFile(job_path);
  if (!job.ok()) return Status::Ok();  // The server says what is wrong, as `run` would.
  std::set<std::string> added;
  for (const std::string& path : DataPaths(job->job)) {
    if (path.empty() || !data::StaysInDataRoot(path) || !added.insert(path).second) continue;
    StatusOr<std::string> content = ReadFile(ResolvePath(job->directory, path));
    if (!content.ok()) continue;
    proto::DataFile* file = submission->add_data_file();
    file->set_path(path);
    file->set_content(std::move(*content));
  }
  return Status::Ok();
}

StatusOr<proto::JobSubmission> MakeSubmission(const std::string& job_path,
                                              const SubmitFlags& flags) {
  proto::JobSubmission submission;
  StatusOr<std::string> text = ReadFile(job_path);
  if (!text.ok()) {
    // What `softwire run` says about a job file it cannot read.
    StatusOr<compiler::JobFile> unreadable = compiler::ParseJobFile(job_path);
    return unreadable.ok() ? text.status() : unreadable.status();
  }
  submission.set_job_text(std::move(*text));
  submission.set_file_name(job_path);
  if (!flags.no_upload) SOFTWIRE_RETURN_IF_ERROR(AddDataFiles(job_path, &submission));
  proto::RunSettings* settings = submission.mutable_settings();
  settings->set_steps(flags.steps);
  settings->mutable_parallel()->set_data_parallel(flags.dp);
  settings->mutable_parallel()->set_tensor_parallel(flags.tp);
  settings->mutable_parallel()->set_pipeline_stages(flags.pp);
  settings->set_micro_batches(flags.micro_batches);
  settings->set_devices(static_cast<int32_t>(flags.devices));
  settings->set_trace(flags.trace);
  if (!flags.trace_steps.empty()) {
    const trace::StepWindow window = *trace::ParseStepWindow(flags.trace_steps);
    settings->set_trace_first_step(window.first);
    settings->set_trace_end_step(std::max<int64_t>(window.end, 0));  // 0: to the end.
  }
  settings->set_stall_timeout_seconds(flags.stall_timeout);
  settings->set_no_memory_reuse(flags.no_memory_reuse);
  settings->set_no_views(flags.no_views);
  settings->set_no_in_place(flags.no_in_place);
  settings->set_checkpoint_every(flags.checkpoint_every);
  settings->set_keep_checkpoints(static_cast<int32_t>(flags.keep_checkpoints));
  settings->set_max_restarts(static_cast<int32_t>(flags.max_restarts));
  settings->set_restart_wait_seconds(flags.restart_wait);
  settings->set_precision(*ParsePrecision(flags.precision));  // CheckFlags checked it.
  submission.set_idempotency_key(NewIdempotencyKey());
  return submission;
}

// Submits, retrying with the same key while the server cannot be reached.
StatusOr<proto::SubmitJobResponse> SubmitWithRetries(service::JobClient* client,
                                                     const proto::JobSubmission& submission,
                                                     const std::atomic<bool>& interrupted) {
  double backoff = 0.5;
  for (int attempt = 1;; ++attempt) {
    StatusOr<proto::SubmitJobResponse> submitted = client->Submit(submission);
    if (submitted.ok() || attempt == kSubmitAttempts || interrupted ||
        (submitted.status().code() != StatusCode::kUnavailable &&
         submitted.status().code() != StatusCode::kDeadlineExceeded)) {
      return submitted;
    }
    std::fprintf(stderr, "softwire submit: %s; trying again in %.1f s\n",
                 submitted.status().message().c_str(), backoff);
    std::this_thread::sleep_for(std::chrono::duration<double>(backoff));
    backoff *= 2;
  }
}

// Ctrl-C while following: cancel the job (--cancel-on-interrupt) or say how to find it again.
int OnInterrupt(service::JobClient* client, const std::string& job_id, const SubmitFlags& flags) {
  const std::string to = " --to " + client->address();
  if (flags.cancel_on_interrupt) {
    StatusOr<proto::JobInfo> cancelled = client->Cancel(job_id, "cancelled by its submitter");
    if (!cancelled.ok()) {
      std::fprintf(stderr, "softwire submit: interrupted; cancelling %s failed: %s\n",
                   job_id.c_str(), cancelled.status().message().c_str());
      return kExitRunFailed;
    }
    std::fprintf(stderr, "softwire submit: interrupted; %s is %s\n", job_id.c_str(),
                 cancelled->state() == proto::JOB_STATE_CANCELLED ? "cancelled" : "over already");
    return kExitRunFailed;
  }
  std::fprintf(stderr,
               "softwire submit: interrupted; %s keeps running on the server.\n"
               "  watch it:  softwire watch %s%s\n"
               "  cancel it: softwire cancel %s%s\n",
               job_id.c_str(), job_id.c_str(), to.c_str(), job_id.c_str(), to.c_str());
  return kExitRunFailed;
}

}  // namespace

std::string SubmitHelp() {
  SubmitFlags flags;
  return "usage: softwire submit JOB.pbtxt [flags]\n"
         "\n"
         "Sends JOB.pbtxt to a server (softwire serve), with the data files it names that lie\n"
         "beside it (unless --no-upload: then they must be under the server's --data-root),\n"
         "and follows it: a progress bar (step, loss, samples/s, time left) on a terminal,\n"
         "otherwise the lines softwire run prints, then the final metrics. A lost connection\n"
         "is picked up again from the last event seen. Ctrl-C leaves the job running and says\n"
         "how to watch or cancel it (--cancel-on-interrupt cancels it). Each invocation sends\n"
         "a fresh idempotency key, the same on its own retries: a retried submit never runs a\n"
         "job twice.\n"
         "\n"
         "On a server with node agents (serve --nodes N), --max-restarts N with\n"
         "--checkpoint-every K keeps a job going when one of its nodes is lost: it runs again\n"
         "on the live nodes (waiting up to --restart-wait for a node to join when too few are\n"
         "left) from its latest checkpoint, losing at most the K steps since; the feed says\n"
         "which node was lost, the step it resumes from and its new devices, and the steps\n"
         "after that checkpoint come again (docs/NODES.md, \"Restarts\").\n"
         "\n"
         "flags:\n" +
         MakeParser(&flags).Help() +
         "\n"
         "exit codes: 0 the job succeeded (or --detach: it is queued); 2 bad input (the job,\n"
         "its data, flags; the message is softwire run's); 1 the job failed or was cancelled,\n"
         "the server could not be reached, or Ctrl-C.\n";
}

int SubmitCommand(const std::vector<std::string>& args) {
  SubmitFlags flags;
  const FlagParser parser = MakeParser(&flags);
  const CommandLineSpec spec{"submit", "JOB.pbtxt", "job file", "",
                             &parser,  &flags.help, SubmitHelp, [&] { return CheckFlags(flags); }};
  std::string job_path;
  if (std::optional<int> exit = ReadCommandLine(spec, args, &job_path)) return *exit;
  auto fail = [](const std::string& message, int code) {
    std::fprintf(stderr, "softwire submit: %s\n", message.c_str());
    return code;
  };
  StatusOr<service::JobClientOptions> options = ClientOptionsFor(flags.server);
  if (!options.ok()) return fail(options.status().message(), kExitBadInput);
  Status writable = CheckMetricsOutput(flags.metrics_out);
  if (!writable.ok()) return fail(writable.message(), kExitBadInput);
  StatusOr<proto::JobSubmission> submission = MakeSubmission(job_path, flags);
  if (!submission.ok()) return fail(submission.status().message(), kExitBadInput);

  // From here on Ctrl-C stops following (and perhaps cancels); it never kills the command.
  std::atomic<bool> interrupted{false};
  std::atomic<service::JobClient*> watched_client{nullptr};
  StatusOr<std::unique_ptr<InterruptWatcher>> interrupts = InterruptWatcher::Install([&](int) {
    interrupted = true;
    if (service::JobClient* client = watched_client.load()) client->StopWatching();
  });
  if (!interrupts.ok()) return fail(interrupts.status().message(), kExitRunFailed);
  service::JobClient client(*options);
  watched_client = &client;

  StatusOr<proto::SubmitJobResponse> submitted =
      SubmitWithRetries(&client, *submission, interrupted);
  if (!submitted.ok()) {
    const Status& status = submitted.status();
    const bool from_the_job = status.code() == StatusCode::kInvalidArgument ||
                              status.code() == StatusCode::kFailedPrecondition ||
                              status.code() == StatusCode::kResourceExhausted;
    return fail(
        from_the_job ? ServerMessage(status, "SubmitJob", client.address()) : status.message(),
        ExitCodeFor(status));
  }
  const std::string job_id = submitted->job().job_id();
  if (flags.detach) {
    std::printf("%s\n", job_id.c_str());
    return kExitSuccess;
  }
  if (interrupted) return OnInterrupt(&client, job_id, flags);
  if (submitted->existing() && !flags.quiet) {
    std::fprintf(stderr, "softwire submit: the server had this submission already: %s\n",
                 job_id.c_str());
  }
  FeedOptions feed;
  feed.command = "submit";
  feed.progress_bar = isatty(STDOUT_FILENO) != 0;
  feed.log_every = flags.log_every;
  feed.quiet = flags.quiet;
  feed.metrics_out = flags.metrics_out;
  StatusOr<FeedOutcome> outcome = FollowJob(&client, job_id, feed);
  if (interrupted) return OnInterrupt(&client, job_id, flags);
  if (!outcome.ok()) {
    return fail(outcome.status().message() + " (the job " + job_id +
                    " may still run: softwire watch " + job_id + " --to " + client.address() + ")",
                kExitRunFailed);
  }
  return ReportOutcome("submit", job_id, *outcome);
}

}  // namespace cli
}  // namespace softwire
