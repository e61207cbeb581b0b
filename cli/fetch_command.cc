// `softwire fetch ID --to ADDR [--save DIR] [--trace FILE] [--metrics-out FILE]`: what a served
// job made, written where `softwire run` would write it.
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/file.h"
#include "base/npy.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/flag_parser.h"
#include "cli/server_connection.h"
#include "cli/step_output.h"
#include "proto/tensor_desc.h"
#include "trace/chrome_trace.h"
#include "trace/timeline_render.h"
#include "trace/trace_summary.h"

namespace softwire {
namespace cli {
namespace {

struct FetchFlags {
  ServerFlags server;
  std::string save;
  std::string trace;
  std::string metrics_out;
  bool help = false;
};

FlagParser MakeParser(FetchFlags* flags) {
  FlagParser parser;
  AddServerFlags(&parser, &flags->server);
  parser.AddString("save", &flags->save, "DIR", "save each trained variable as DIR/<name>.npy");
  parser.AddString(
      "trace", &flags->trace, "FILE",
      "write the job's actor trace to FILE (its summary to FILE.summary.txt, its timeline to "
      "FILE.svg)");
  parser.AddString("metrics-out", &flags->metrics_out, "FILE",
                   "write one JSON object per step to FILE, as softwire run does");
  parser.AddBool("help", &flags->help, "show this help");
  return parser;
}

// "fc1/weight" -> "DIR/fc1/weight.npy"; no part may be empty, "." or "..", so every file stays
// inside DIR (as `softwire run --save`).
StatusOr<std::string> VariablePath(const std::string& directory, const std::string& name) {
  size_t begin = 0;
  while (begin <= name.size()) {
    size_t end = name.find('/', begin);
    if (end == std::string::npos) end = name.size();
    const std::string part = name.substr(begin, end - begin);
    if (part.empty() || part == "." || part == "..") {
      return InvalidArgumentError("variable '" + name + "' cannot be saved under its name");
    }
    begin = end + 1;
  }
  return directory + "/" + name + ".npy";
}

// Gathers the parts of the results stream.
struct Fetched {
  proto::JobInfo job;
  std::vector<proto::VariableInfo> variables;
  std::map<std::string, std::string> variable_bytes;
  std::string metrics;
  int64_t steps = 0;
  double last_loss = NAN;
  std::string trace;
  std::string trace_summary;
};

Status Take(const proto::FetchResultsResponse& part, Fetched* fetched) {
  switch (part.part_case()) {
    case proto::FetchResultsResponse::kHeader:
      fetched->job = part.header().job();
      fetched->variables.assign(part.header().variable().begin(), part.header().variable().end());
      break;
    case proto::FetchResultsResponse::kStep: {
      runtime::StepResult step;
      step.step = part.step().step();
      step.loss = part.step().loss();
      step.outputs.insert(part.step().metric().begin(), part.step().metric().end());
      step.seconds = part.step().seconds();
      step.samples_per_second = part.step().samples_per_second();
      fetched->metrics += MetricsJsonLine(step) + "\n";
      fetched->last_loss = step.loss;
      ++fetched->steps;
      break;
    }
    case proto::FetchResultsResponse::kVariable: {
      std::string& bytes = fetched->variable_bytes[part.variable().name()];
      if (part.variable().offset() != static_cast<int64_t>(bytes.size())) {
        return DataLossError("variable '" + part.variable().name() + "' came out of order");
      }
      bytes += part.variable().data();
      break;
    }
    case proto::FetchResultsResponse::kTrace:
      if (part.trace().offset() != static_cast<int64_t>(fetched->trace.size())) {
        return DataLossError("the trace came out of order");
      }
      fetched->trace += part.trace().data();
      break;
    case proto::FetchResultsResponse::kTraceSummary:
      fetched->trace_summary = part.trace_summary();
      break;
    default:
      break;
  }
  return Status::Ok();
}

Status SaveVariables(const std::string& directory, const Fetched& fetched) {
  for (const proto::VariableInfo& variable : fetched.variables) {
    auto found = fetched.variable_bytes.find(variable.name());
    const std::string empty;
    const std::string& bytes = found == fetched.variable_bytes.end() ? empty : found->second;
    if (static_cast<int64_t>(bytes.size()) != variable.bytes()) {
      return DataLossError("variable '" + variable.name() + "' came with " +
                           std::to_string(bytes.size()) + " of its " +
                           std::to_string(variable.bytes()) + " bytes");
    }
    SOFTWIRE_ASSIGN_OR_RETURN(std::string path, VariablePath(directory, variable.name()));
    SOFTWIRE_RETURN_IF_ERROR(MakeDirectories(DirectoryOf(path)));
    SOFTWIRE_RETURN_IF_ERROR(
        WriteNpy(path, DTypeOf(variable.desc()), ShapeOf(variable.desc()), bytes.data()));
  }
  return Status::Ok();
}

Status WriteOutputs(const FetchFlags& flags, const Fetched& fetched) {
  if (!flags.metrics_out.empty()) {
    Status written = WriteFileAtomically(flags.metrics_out, fetched.metrics);
    if (!written.ok()) return written.WithContext("--metrics-out");
  }
  if (!flags.save.empty()) {
    Status made = MakeDirectories(flags.save);
    if (made.ok()) made = SaveVariables(flags.save, fetched);
    if (!made.ok()) return made.WithContext("--save");
  }
  if (!flags.trace.empty()) {
    Status written = WriteFileAtomically(flags.trace, fetched.trace);
    if (written.ok() && !fetched.trace_summary.empty()) {
      written = WriteFileAtomically(flags.trace + ".summary.txt", fetched.trace_summary);
    }
    // The timeline is drawn here, from the trace as fetched, as `softwire run --trace` does.
    if (written.ok()) {
      StatusOr<trace::TraceModel> model = trace::ParseChromeTrace(fetched.trace, flags.trace);
      if (!model.ok()) return model.status().WithContext("--trace");
      const trace::TraceSummary summary = trace::Summarize(*model);
      written =
          WriteFileAtomically(flags.trace + ".svg", trace::RenderTimelineSvg(*model, &summary));
    }
    if (!written.ok()) return written.WithContext("--trace");
  }
  return Status::Ok();
}

}  // namespace

std::string FetchHelp() {
  FetchFlags flags;
  return "usage: softwire fetch ID [flags]\n"
         "\n"
         "Fetches what job ID of a server made: its per-step metrics (--metrics-out), its trained\n"
         "variables (--save; a job that succeeded), its actor trace and the trace's summary\n"
         "(--trace; a job submitted with --trace). Without flags it prints the job's state and\n"
         "final metrics.\n"
         "\n"
         "flags:\n" +
         MakeParser(&flags).Help() +
         "\n"
         "exit codes: 0 success; 2 bad flags, an unknown job, results it does not have (a job\n"
         "still running, variables of one that failed, a trace of one run untraced); 1 the\n"
         "server could not be reached.\n";
}

int FetchCommand(const std::vector<std::string>& args) {
  FetchFlags flags;
  const FlagParser parser = MakeParser(&flags);
  const CommandLineSpec spec{"fetch", "ID",        "job id",  "job-3",
                             &parser, &flags.help, FetchHelp, nullptr};
  std::string job_id;
  if (std::optional<int> exit = ReadCommandLine(spec, args, &job_id)) return *exit;
  auto fail = [](const Status& status) {
    std::fprintf(stderr, "softwire fetch: %s\n", status.message().c_str());
    return ExitCodeFor(status);
  };
  StatusOr<service::JobClientOptions> options = ClientOptionsFor(flags.server);
  if (!options.ok()) return fail(options.status());
  service::JobClient client(*options);
  proto::FetchResultsRequest request;
  request.set_job_id(job_id);
  request.set_metrics(true);
  request.set_variables(!flags.save.empty());
  request.set_trace(!flags.trace.empty());
  Fetched fetched;
  Status status = client.Fetch(
      request, [&](const proto::FetchResultsResponse& part) { return Take(part, &fetched); });
  if (!status.ok()) return fail(status);
  Status written = WriteOutputs(flags, fetched);
  if (!written.ok()) return fail(written);
  std::string state = proto::JobState_Name(fetched.job.state());
  if (state.rfind("JOB_STATE_", 0) == 0) state = state.substr(10);
  std::printf("%s '%s': %s, %lld steps", job_id.c_str(), fetched.job.name().c_str(), state.c_str(),
              static_cast<long long>(fetched.steps));
  if (fetched.steps > 0 && !std::isnan(fetched.last_loss)) {
    std::printf(", final loss %.6f", fetched.last_loss);
  }
  if (!flags.save.empty()) {
    std::printf("; saved %zu variables to %s", fetched.variables.size(), flags.save.c_str());
  }
  if (!flags.trace.empty()) std::printf("; trace %s", flags.trace.c_str());
  std::printf("\n");
  return kExitSuccess;
}

}  // namespace cli
}  // namespace softwire
