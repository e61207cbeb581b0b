// `softwire compile`: the plan a job compiles to, as a summary or in full.
#include <algorithm>
#include <cstdio>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/flag_parser.h"
#include "cli/parallel_flags.h"
#include "compiler/compiler.h"

namespace softwire {
namespace cli {
namespace {

struct CompileFlags {
  bool dump = false;
  bool explain = false;
  bool json = false;
  int64_t steps = -1;  // -1: not given, the job's steps.
  ParallelFlags parallel;
  bool help = false;
};

FlagParser MakeParser(CompileFlags* flags) {
  FlagParser parser;
  parser.AddBool("dump", &flags->dump, "print the whole plan (stable text) instead of a summary");
  parser.AddBool("explain", &flags->explain,
                 "print why every op runs where it does: stages, devices, sbp and boxing, "
                 "with the costs that chose them");
  parser.AddBool("json", &flags->json,
                 "print the summary's figures as one JSON object: per device the planned bytes, "
                 "their split (weights, gradients, optimizer state, kept activations, "
                 "transient, transfer, ...) and what views, reuse and in-place ops saved");
  parser.AddInt("steps", &flags->steps, "N", "compile for N steps instead of the job's");
  AddParallelFlags(&parser, &flags->parallel);
  parser.AddBool("help", &flags->help, "show this help");
  return parser;
}

}  // namespace

ExitCode ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return kExitSuccess;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kResourceExhausted:
    case StatusCode::kUnimplemented:
    case StatusCode::kDataLoss:
      return kExitBadInput;
    default:
      return kExitRunFailed;
  }
}

std::string CompileHelp() {
  CompileFlags flags;
  return "usage: softwire compile JOB.pbtxt [flags]\n"
         "\n"
         "Compiles JOB.pbtxt and prints its plan: devices with planned memory and what it holds\n"
         "(weights, gradients, optimizer state, kept activations, transient, transfer; saved by\n"
         "views, reuse, in place), actors by kind, and a table of actors with their registers,\n"
         "slots and bytes. --json prints the figures as JSON. --explain prints the\n"
         "placement instead: each pipeline stage's devices, each op's devices and sbp with the\n"
         "compute and boxing seconds that chose them, and every boxing edge.\n"
         "\n"
         "flags:\n" +
         MakeParser(&flags).Help() +
         "\n"
         "exit codes: 0 compiled; 2 bad input (the message names file, line, op and field).\n";
}

int CompileCommand(const std::vector<std::string>& args) {
  CompileFlags flags;
  compiler::CompileOptions options;
  auto check_flags = [&]() -> Status {
    if (flags.steps != -1 && flags.steps < 1) {
      return InvalidArgumentError("--steps must be at least 1");
    }
    const int modes = int{flags.dump} + int{flags.explain} + int{flags.json};
    if (modes > 1) {
      return InvalidArgumentError("give one of --dump, --explain and --json");
    }
    return ApplyParallelFlags(flags.parallel, &options);
  };
  const FlagParser parser = MakeParser(&flags);
  const CommandLineSpec spec{"compile", "JOB.pbtxt", "job file",  "",
                             &parser,   &flags.help, CompileHelp, check_flags};
  std::string job_path;
  if (std::optional<int> exit = ReadCommandLine(spec, args, &job_path)) return *exit;
  StatusOr<compiler::JobFile> job = compiler::ParseJobFile(job_path);
  if (!job.ok()) {
    std::fprintf(stderr, "softwire compile: %s\n", job.status().message().c_str());
    return ExitCodeFor(job.status());
  }
  options.steps = std::max<int64_t>(flags.steps, 0);  // 0: the job's.
  if (flags.explain) {
    StatusOr<std::string> explained = compiler::ExplainPlacement(*job, options);
    if (!explained.ok()) {
      std::fprintf(stderr, "softwire compile: %s\n", explained.status().message().c_str());
      return ExitCodeFor(explained.status());
    }
    std::fputs(explained->c_str(), stdout);
    if (!explained->empty() && explained->back() != '\n') std::fputc('\n', stdout);
    return kExitSuccess;
  }
  StatusOr<proto::Plan> plan = compiler::CompileJob(*job, options);
  if (!plan.ok()) {
    std::fprintf(stderr, "softwire compile: %s\n", plan.status().message().c_str());
    return ExitCodeFor(plan.status());
  }
  std::string text = flags.dump   ? compiler::DumpPlan(*plan)
                     : flags.json ? compiler::SummarizePlanJson(*plan)
                                  : compiler::SummarizePlan(*plan);
  std::fputs(text.c_str(), stdout);
  if (!text.empty() && text.back() != '\n') std::fputc('\n', stdout);
  return kExitSuccess;
}

}  // namespace cli
}  // namespace softwire
