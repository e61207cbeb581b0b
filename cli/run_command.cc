// `softwire run`: compile a job and run it in this process.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/cpu_features.h"
#include "base/file.h"
#include "base/format_bytes.h"
#include "base/npy.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/flag_parser.h"
#include "cli/live_diagnosis.h"
#include "cli/parallel_flags.h"
#include "cli/step_output.h"
#include "compiler/compiler.h"
#include "plan/labels.h"
#include "runtime/device/device.h"
#include "runtime/host/checkpoint_files.h"
#include "runtime/host/job_runner.h"
#include "runtime/host/plan_variables.h"
#include "runtime/rpc/diagnostics_server.h"
#include "trace/trace_files.h"

namespace softwire {
namespace cli {
namespace {

struct RunFlags {
  int64_t steps = -1;  // -1: not given, the job's steps.
  std::string metrics_out;
  std::string save;
  bool quiet = false;
  int64_t log_every = 0;
  double stall_timeout = 60;
  int64_t caf_threads = 0;
  std::string caf_policy = "sharing";
  int64_t kernel_threads = 0;
  int64_t blas_threads = 0;
  bool pin_threads = false;
  bool cuda_tf32 = false;
  bool no_stream_order = false;
  std::string trace;
  std::string trace_steps;
  int64_t trace_cap = trace::kDefaultEventCap;
  std::string listen;
  int64_t checkpoint_every = 0;
  std::string checkpoint_dir;
  int64_t keep_checkpoints = 3;
  std::string resume;
  ParallelFlags parallel;
  bool help = false;
};

FlagParser MakeParser(RunFlags* flags) {
  FlagParser parser;
  parser.AddInt("steps", &flags->steps, "N", "run N steps instead of the job's");
  AddParallelFlags(&parser, &flags->parallel);
  parser.AddString("metrics-out", &flags->metrics_out, "FILE",
                   "write one JSON object per step to FILE (written whole at the end)");
  parser.AddString("save", &flags->save, "DIR", "save each trained variable as DIR/<name>.npy");
  parser.AddBool("quiet", &flags->quiet, "print nothing but errors");
  parser.AddInt("log-every", &flags->log_every, "N",
                "print a progress line every N steps (default: about 20 lines)");
  parser.AddDouble("stall-timeout", &flags->stall_timeout, "SECONDS",
                   "fail, saying what each actor waits for, when nothing ran for this long "
                   "(0: never; default 60)");
  parser.AddInt("caf-threads", &flags->caf_threads, "N",
                "CAF scheduler threads (default: one per cpu device, at most the cores)");
  parser.AddString("caf-policy", &flags->caf_policy, "POLICY",
                   "CAF scheduler policy: sharing (default) or stealing");
  parser.AddInt("kernel-threads", &flags->kernel_threads, "N",
                "threads per cpu device for kernels (default: the plan's cores)");
  parser.AddInt("blas-threads", &flags->blas_threads, "N",
                "give OpenBLAS its own pool of N threads (default 0: BLAS runs on the devices' "
                "kernel threads)");
  parser.AddBool("pin-threads", &flags->pin_threads,
                 "pin each kernel thread and CAF worker to one core");
  parser.AddBool("cuda-tf32", &flags->cuda_tf32,
                 "let cuda devices run float32 products on TF32 tensor cores (default: off, "
                 "products as exact as the cpu's; docs/CUDA.md)");
  parser.AddBool("no-stream-order", &flags->no_stream_order,
                 "on cuda devices, make every Ready and Release wait for its firing's completion "
                 "instead of sending it at launch between actors of one stream (to compare; "
                 "docs/PROTOCOL.md)");
  parser.AddString("trace", &flags->trace, "FILE",
                   "record the actor trace into FILE (Chrome format; also FILE.summary.txt and "
                   "FILE.svg)");
  parser.AddString("trace-steps", &flags->trace_steps, "A:B",
                   "trace only steps A..B-1 (A: from A on; default: every step)");
  parser.AddInt("trace-cap", &flags->trace_cap, "N",
                "record at most N firings, then count the rest as dropped (default 4194304)");
  parser.AddString("listen", &flags->listen, "ADDR",
                   "serve live diagnosis (softwire diagnose ADDR) on a loopback address, e.g. "
                   "127.0.0.1:7070 (port 0: any free port, printed)");
  parser.AddInt("checkpoint-every", &flags->checkpoint_every, "N",
                "save a checkpoint every N steps (into --checkpoint-dir, else --resume's DIR)");
  parser.AddString("checkpoint-dir", &flags->checkpoint_dir, "DIR",
                   "where checkpoints go: DIR/step-NNNNNNNN/");
  parser.AddInt("keep-checkpoints", &flags->keep_checkpoints, "K",
                "keep the latest K checkpoints (default 3)");
  parser.AddString("resume", &flags->resume, "DIR",
                   "continue from the latest whole checkpoint in DIR, on any --dp/--tp/--pp");
  parser.AddBool("help", &flags->help, "show this help");
  return parser;
}

Status CheckFlags(const RunFlags& flags) {
  if (flags.steps != -1 && flags.steps < 1) {
    return InvalidArgumentError("--steps must be at least 1");
  }
  if (flags.log_every < 0) return InvalidArgumentError("--log-every must be at least 1");
  if (flags.stall_timeout < 0) return InvalidArgumentError("--stall-timeout must be >= 0");
  if (flags.caf_threads < 0 || flags.kernel_threads < 0 || flags.blas_threads < 0) {
    return InvalidArgumentError("thread counts must be at least 1");
  }
  if (flags.caf_policy != "sharing" && flags.caf_policy != "stealing") {
    return InvalidArgumentError("--caf-policy must be 'sharing' or 'stealing', not '" +
                                flags.caf_policy + "'");
  }
  if (flags.trace.empty() &&
      (!flags.trace_steps.empty() || flags.trace_cap != trace::kDefaultEventCap)) {
    return InvalidArgumentError("--trace-steps and --trace-cap need --trace FILE");
  }
  if (flags.trace_cap < 1) return InvalidArgumentError("--trace-cap must be at least 1");
  if (flags.checkpoint_every < 0) {
    return InvalidArgumentError("--checkpoint-every must be at least 1");
  }
  if (flags.keep_checkpoints < 1 || flags.keep_checkpoints > 1000) {
    return InvalidArgumentError("--keep-checkpoints must be between 1 and 1000");
  }
  if (flags.checkpoint_every > 0 && flags.checkpoint_dir.empty() && flags.resume.empty()) {
    return InvalidArgumentError("--checkpoint-every needs --checkpoint-dir DIR (or --resume DIR)");
  }
  if (flags.checkpoint_every == 0 && !flags.checkpoint_dir.empty()) {
    return InvalidArgumentError("--checkpoint-dir needs --checkpoint-every N");
  }
  if (!flags.trace_steps.empty()) {
    StatusOr<trace::StepWindow> window = trace::ParseStepWindow(flags.trace_steps);
    if (!window.ok()) return window.status().WithContext("--trace-steps");
  }
  return Status::Ok();
}

// Fails before a long run, not after it, when an output could not be written.
Status PrepareOutputs(const RunFlags& flags) {
  if (!flags.metrics_out.empty()) {
    std::string directory = DirectoryOf(flags.metrics_out);
    std::string probe = flags.metrics_out + ".probe.tmp." + std::to_string(::getpid());
    Status writable = WriteFileAtomically(probe, "");
    if (!writable.ok()) {
      return InvalidArgumentError("--metrics-out: cannot write into '" + directory + "'");
    }
    std::remove(probe.c_str());
  }
  if (!flags.save.empty()) {
    Status made = MakeDirectories(flags.save);
    if (!made.ok()) return made.WithContext("--save");
  }
  if (!flags.trace.empty())
    SOFTWIRE_RETURN_IF_ERROR(trace::CheckTraceOutput(flags.trace, "--trace"));
  return Status::Ok();
}

// Writes the run's trace, its summary and its timeline; one line about it on stdout.
Status WriteTrace(const std::string& path, runtime::LoadedPlan* loaded, bool quiet) {
  std::optional<trace::TraceLog> log = loaded->TakeTrace();
  if (!log) return InternalError("--trace: the run recorded no trace");
  StatusOr<std::string> summary = trace::WriteTraceFiles(path, *log);
  if (!summary.ok()) return summary.status().WithContext("--trace");
  if (!quiet) {
    std::string dropped;
    if (log->info.events_dropped > 0) {
      dropped = ", " + std::to_string(log->info.events_dropped) + " more dropped at the cap";
    }
    std::printf("trace: %s (%lld firings%s); summary %s.summary.txt; timeline %s.svg\n",
                path.c_str(), static_cast<long long>(log->info.events_recorded), dropped.c_str(),
                path.c_str(), path.c_str());
  }
  return Status::Ok();
}

void PrintHeader(const proto::Plan& plan) {
  std::string devices;
  for (const proto::PlanDevice& device : plan.device()) {
    if (!devices.empty()) devices += ", ";
    devices += plan::DeviceName(device) + " (" + FormatBytes(device.planned_bytes()) + ")";
  }
  std::printf("job '%s': %d actors on %s; %lld steps of %lld x %lld samples\n",
              plan.job_name().c_str(), plan.actor_size(), devices.c_str(),
              static_cast<long long>(plan.schedule().steps()),
              static_cast<long long>(plan.schedule().pieces_per_step()),
              static_cast<long long>(plan.schedule().micro_batch_size()));
  std::fflush(stdout);
}

// Prints "softwire run: MESSAGE" to stderr and returns `exit_code`.
int Fail(const std::string& message, int exit_code) {
  std::fprintf(stderr, "softwire run: %s\n", message.c_str());
  return exit_code;
}

// Reads and compiles the job at `job_path` into `plan`, then checks that every output can be
// written. `job_directory`: the job file's directory (absolute), the run's data root. Returns the
// exit code to end with when one of them failed.
std::optional<int> CompileForRun(const std::string& job_path, const RunFlags& flags,
                                 compiler::CompileOptions* compile_options, proto::Plan* plan,
                                 std::string* job_directory) {
  StatusOr<compiler::JobFile> job = compiler::ParseJobFile(job_path);
  if (!job.ok()) return Fail(job.status().message(), ExitCodeFor(job.status()));
  compile_options->steps = std::max<int64_t>(flags.steps, 0);  // 0: the job's.
  StatusOr<proto::Plan> compiled = compiler::CompileJob(*job, *compile_options);
  if (!compiled.ok()) return Fail(compiled.status().message(), ExitCodeFor(compiled.status()));
  Status prepared = PrepareOutputs(flags);
  if (!prepared.ok()) return Fail(prepared.message(), kExitBadInput);
  *plan = std::move(*compiled);
  *job_directory = job->directory;
  return std::nullopt;
}

// The name of the plan's loss output; "" for a job without one.
std::string LossName(const proto::Plan& plan) {
  std::string loss_name;
  for (const proto::PlanOutput& output : plan.output()) {
    if (output.is_loss()) loss_name = output.name();
  }
  return loss_name;
}

runtime::RunOptions MakeRunOptions(const RunFlags& flags,
                                   std::function<void(const runtime::StepResult&)> progress) {
  runtime::RunOptions options;
  options.stall_timeout_seconds = flags.stall_timeout;
  options.caf.max_threads = static_cast<int>(flags.caf_threads);
  options.caf.policy = flags.caf_policy;
  options.kernel_threads = static_cast<int>(flags.kernel_threads);
  options.blas_threads = static_cast<int>(flags.blas_threads);
  options.pin_threads = flags.pin_threads;
  options.cuda_allow_tf32 = flags.cuda_tf32;
  options.cuda_stream_ordered_edges = !flags.no_stream_order;
  if (!flags.trace.empty()) {
    options.trace.enabled = true;
    options.trace.event_cap = flags.trace_cap;
    if (!flags.trace_steps.empty()) {
      options.trace.steps = *trace::ParseStepWindow(flags.trace_steps);
    }
  }
  options.progress = std::move(progress);
  options.read_variables = !flags.save.empty();  // A copy of the weights, only to save them.
  if (flags.checkpoint_every > 0) {
    options.checkpoint.every = flags.checkpoint_every;
    options.checkpoint.keep = static_cast<int>(flags.keep_checkpoints);
    options.checkpoint.directory =
        flags.checkpoint_dir.empty() ? flags.resume : flags.checkpoint_dir;
  }
  return options;
}

// Runs the loaded job into `result` while live diagnosis can ask it what every actor waits
// for: `kill -USR1 <pid>` prints the report and the job goes on; --listen serves it to
// `softwire diagnose`. Returns the exit code to end with when the server cannot start.
std::optional<int> RunUnderDiagnosis(const RunFlags& flags, const proto::Plan& plan,
                                     runtime::LoadedPlan* loaded,
                                     StatusOr<runtime::RunResult>* result) {
  auto describe_waits = [loaded](std::chrono::milliseconds timeout) {
    return loaded->DescribeWaits(timeout);
  };
  std::unique_ptr<rpc::DiagnosticsServer> server;
  if (!flags.listen.empty()) {
    const std::string node = plan.device_size() > 0 ? plan.device(0).node() : "";
    StatusOr<std::unique_ptr<rpc::DiagnosticsServer>> started =
        rpc::DiagnosticsServer::Start(flags.listen, node, describe_waits);
    if (!started.ok()) {
      return Fail("--listen: " + started.status().message(), ExitCodeFor(started.status()));
    }
    server = std::move(*started);
    std::fprintf(stderr, "softwire run: diagnostics on %s (softwire diagnose %s)\n",
                 server->address().c_str(), server->address().c_str());
    std::fflush(stderr);
  }
  StatusOr<std::unique_ptr<WaitStateSignal>> signal = WaitStateSignal::Install([describe_waits] {
    StatusOr<runtime::JobWaitStates> waits = describe_waits(std::chrono::seconds(1));
    return waits.ok() ? waits->Text(/*max_lines=*/200)
                      : "softwire run: SIGUSR1: " + waits.status().message();
  });
  if (!flags.quiet) PrintHeader(plan);
  *result = loaded->Run();
  signal = UnavailableError("the run ended");  // Restores SIGUSR1's previous disposition.
  return std::nullopt;
}

// "done: 10 steps in 1.23 s, 2081 samples/s, final loss 0.123456; saved 6 variables to DIR".
void PrintDone(const RunFlags& flags, const proto::Plan& plan, const std::string& loss_name,
               const runtime::RunResult& result) {
  // The steps this run trained: a resumed run's plan also counts the steps before its
  // checkpoint, which it did not run.
  double samples =
      static_cast<double>(static_cast<int64_t>(result.steps.size()) *
                          plan.schedule().pieces_per_step() * plan.schedule().micro_batch_size());
  std::printf("done: %lld steps in %.2f s, %.0f samples/s",
              static_cast<long long>(result.steps.size()), result.seconds,
              result.seconds > 0 ? samples / result.seconds : 0.0);
  if (!result.steps.empty() && !loss_name.empty()) {
    std::printf(", final loss %.6f", result.steps.back().loss);
  }
  if (!flags.save.empty()) {
    std::printf("; saved %zu variables to %s", result.variables.size(), flags.save.c_str());
  }
  std::printf("\n");
}

// Writes what the run leaves behind (the trace and the metrics also when it failed; the
// variables only when it succeeded) and returns the exit code.
int FinishRun(const RunFlags& flags, const proto::Plan& plan, const std::string& loss_name,
              const std::string& metrics, runtime::LoadedPlan* loaded,
              const StatusOr<runtime::RunResult>& result) {
  if (!flags.trace.empty()) {
    Status traced = WriteTrace(flags.trace, loaded, flags.quiet);
    if (!traced.ok()) {
      Fail(traced.message(), kExitRunFailed);
      if (result.ok()) return kExitRunFailed;
    }
  }
  Status written =
      flags.metrics_out.empty() ? Status::Ok() : WriteFileAtomically(flags.metrics_out, metrics);
  if (!result.ok()) {
    return Fail("job '" + plan.job_name() + "' failed: " + result.status().message(),
                kExitRunFailed);
  }
  if (!written.ok()) return Fail(written.message(), kExitRunFailed);
  if (!flags.save.empty()) {
    Status saved = runtime::SaveVariables(flags.save, result->variables);
    if (!saved.ok()) return Fail("--save: " + saved.message(), kExitRunFailed);
  }
  if (!flags.quiet) PrintDone(flags, plan, loss_name, *result);
  return kExitSuccess;
}

}  // namespace

std::string RunHelp() {
  RunFlags flags;
  return "usage: softwire run JOB.pbtxt [flags]\n"
         "\n"
         "Compiles JOB.pbtxt and runs it in this process, printing the loss, the other metrics\n"
         "and samples/s of about 20 steps along the way. --cluster and --dp/--tp/--pp run it on\n"
         "several devices: cpu devices compute (each with its share of the cores), sim devices\n"
         "take each kernel's estimated time of real time and compute nothing (the loss is then\n"
         "nan; steps and traces are timed as on the modelled hardware).\n"
         "\n"
         "flags:\n" +
         MakeParser(&flags).Help() +
         "\n"
         "--metrics-out lines look like\n"
         "  "
         "{\"step\":0,\"loss\":2.30,\"samples_per_second\":5120,\"seconds\":0.01,\"accuracy\":0.1}"
         "\n"
         "with steps counted from 0. The file is written whole, also when the run fails (with\n"
         "the steps that completed), and never half-written.\n"
         "\n"
         "--trace FILE writes FILE (open it in Perfetto or chrome://tracing), FILE.summary.txt\n"
         "(softwire trace summary FILE) and FILE.svg (softwire trace render), also when the run\n"
         "fails; each is written whole or not at all. kill -USR1 <pid> prints to stderr what\n"
         "every actor waits for while the job goes on; --listen serves the same report to\n"
         "softwire diagnose; a job stalled for --stall-timeout fails with it.\n"
         "\n"
         "--checkpoint-every N saves every variable, the optimizer state and the step count\n"
         "every N steps while the pipeline runs (each update actor copies its part, then goes\n"
         "on), whole or not at all. --resume DIR continues from the latest whole checkpoint in\n"
         "DIR with the batches an unbroken run would read next, on any parallel layout; steps\n"
         "are numbered on from the checkpoint's, up to the job's (or --steps') last.\n"
         "\n"
         "exit codes: 0 success; 2 bad input (job file, its data, flags, output paths); 1 the run\n"
         "failed (the message names the failing actor).\n";
}

namespace {

// A bf16 plan on a cpu without native bf16 runs (its products widen to float32), but slower
// than the float32 plan would: say so, naming the feature.
void WarnWithoutNativeBf16(const proto::Plan& plan) {
  if (plan.precision() != proto::PRECISION_BF16) return;
  const CpuFeatures cpu = DetectCpuFeatures();
  if (cpu.native_bf16()) return;
  std::fprintf(stderr,
               "softwire run: warning: precision bf16 on a cpu without %s: the bf16 products "
               "widen to float32 and run at the float32 rate, plus the casts; expect the plan "
               "to be slower than --precision float32\n",
               cpu.MissingForBf16().c_str());
}

}  // namespace

int RunCommand(const std::vector<std::string>& args) {
  RunFlags flags;
  compiler::CompileOptions compile_options;
  // Every flag, placement included, is checked before the job file is read.
  auto check_flags = [&]() -> Status {
    SOFTWIRE_RETURN_IF_ERROR(CheckFlags(flags));
    return ApplyParallelFlags(flags.parallel, &compile_options);
  };
  const FlagParser parser = MakeParser(&flags);
  const CommandLineSpec spec{"run",   "JOB.pbtxt", "job file", "",
                             &parser, &flags.help, RunHelp,    check_flags};
  std::string job_path;
  if (std::optional<int> exit = ReadCommandLine(spec, args, &job_path)) return *exit;

  proto::Plan plan;
  std::string job_directory;
  if (std::optional<int> exit =
          CompileForRun(job_path, flags, &compile_options, &plan, &job_directory)) {
    return *exit;
  }
  WarnWithoutNativeBf16(plan);
  const std::string loss_name = LossName(plan);
  ProgressPrinter printer(stdout, plan.schedule().steps(), flags.log_every, loss_name);
  std::string metrics;
  runtime::RunOptions options = MakeRunOptions(flags, [&](const runtime::StepResult& step) {
    metrics += runtime::MetricsJsonLine(step) + "\n";
    if (!flags.quiet) printer.OnStep(step);
  });
  // The plan names its data relative to the job file, wherever it is run from.
  options.data_root.directory = job_directory;
  std::optional<runtime::TrainingState> resume;
  if (!flags.resume.empty()) {
    std::vector<std::string> skipped;
    StatusOr<runtime::TrainingState> latest = runtime::LoadLatestCheckpoint(flags.resume, &skipped);
    for (const std::string& why : skipped) std::fprintf(stderr, "softwire run: %s\n", why.c_str());
    if (!latest.ok()) return Fail("--resume: " + latest.status().message(), kExitBadInput);
    resume = std::move(*latest);
    options.resume = &*resume;
    if (!flags.quiet) {
      std::printf("resuming from step %lld (%s)\n", static_cast<long long>(resume->step),
                  runtime::CheckpointFolder(flags.resume, resume->step).c_str());
    }
  }
  StatusOr<std::unique_ptr<runtime::LoadedPlan>> loaded = runtime::LoadedPlan::Load(plan, options);
  if (!loaded.ok()) {
    return Fail("cannot load job '" + plan.job_name() + "'" +
                    (resume ? " from --resume " + flags.resume : std::string()) + ": " +
                    loaded.status().message(),
                ExitCodeFor(loaded.status()));
  }
  resume.reset();  // Written into the plan's memory.
  StatusOr<runtime::RunResult> result = UnavailableError("the run did not start");
  if (std::optional<int> exit = RunUnderDiagnosis(flags, plan, loaded->get(), &result)) {
    return *exit;
  }
  return FinishRun(flags, plan, loss_name, metrics, loaded->get(), result);
}

}  // namespace cli
}  // namespace softwire
