// `softwire trace`: read a trace file written by `softwire run --trace` (or `simulate`).
//
//   softwire trace summary run.trace.json
//   softwire trace render run.trace.json -o timeline.svg
//   softwire trace render run.trace.json -o report.html
//   softwire trace check run.trace.json
#include <cstdio>
#include <string>
#include <vector>

#include "base/file.h"
#include "cli/commands.h"
#include "cli/flag_parser.h"
#include "trace/chrome_trace.h"
#include "trace/chrome_trace_check.h"
#include "trace/timeline_render.h"
#include "trace/trace_summary.h"

namespace softwire {
namespace cli {
namespace {

int BadUsage(const std::string& message) {
  std::fprintf(stderr,
               "softwire trace: %s\nusage: softwire trace summary|render|check FILE ...; "
               "see softwire help trace\n",
               message.c_str());
  return kExitBadInput;
}

// Reads FILE; bad files are bad input (exit 2) and the message names the file.
StatusOr<trace::TraceModel> Read(const std::string& path) {
  StatusOr<trace::TraceModel> model = trace::ReadChromeTrace(path);
  if (!model.ok()) {
    std::fprintf(stderr, "softwire trace: %s\n", model.status().message().c_str());
  }
  return model;
}

int Summary(const std::vector<std::string>& args) {
  if (args.size() != 1) return BadUsage("summary takes one trace file");
  StatusOr<trace::TraceModel> model = Read(args[0]);
  if (!model.ok()) return kExitBadInput;
  std::fputs(trace::FormatSummary(*model, trace::Summarize(*model)).c_str(), stdout);
  return kExitSuccess;
}

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int Render(const std::vector<std::string>& args) {
  std::string output;
  FlagParser parser;
  parser.AddString("output", &output, "OUT", "write to OUT: a .svg timeline or a .html report");
  // -o is the short spelling of --output.
  std::vector<std::string> spelled = args;
  for (std::string& arg : spelled) {
    if (arg == "-o") arg = "--output";
  }
  std::vector<std::string> positional;
  Status parsed = parser.Parse(spelled, &positional);
  if (!parsed.ok()) return BadUsage(parsed.message());
  if (positional.size() != 1) return BadUsage("render takes one trace file");
  if (output.empty()) return BadUsage("render needs -o OUT.svg or -o OUT.html");
  const bool html = EndsWith(output, ".html") || EndsWith(output, ".htm");
  if (!html && !EndsWith(output, ".svg")) {
    return BadUsage("-o must name a .svg or an .html file, not '" + output + "'");
  }
  StatusOr<trace::TraceModel> model = Read(positional[0]);
  if (!model.ok()) return kExitBadInput;
  const trace::TraceSummary summary = trace::Summarize(*model);
  const std::string text =
      html ? trace::RenderHtmlReport(*model, summary) : trace::RenderTimelineSvg(*model, &summary);
  Status written = WriteFileAtomically(output, text);
  if (!written.ok()) {
    std::fprintf(stderr, "softwire trace render: %s\n", written.message().c_str());
    return kExitBadInput;
  }
  std::printf("wrote %s (%zu firings)\n", output.c_str(), model->firings.size());
  return kExitSuccess;
}

int Check(const std::vector<std::string>& args) {
  if (args.size() != 1) return BadUsage("check takes one trace file");
  StatusOr<std::string> text = ReadFile(args[0]);
  if (!text.ok()) {
    std::fprintf(stderr, "softwire trace: %s\n", text.status().message().c_str());
    return kExitBadInput;
  }
  StatusOr<trace::ChromeTraceCounts> counts = trace::CheckChromeTrace(*text);
  if (!counts.ok()) {
    std::fprintf(stderr, "softwire trace: %s: %s\n", args[0].c_str(),
                 counts.status().message().c_str());
    return kExitBadInput;
  }
  std::printf("%s: ok: %lld slices, %lld flows, %lld counter events\n", args[0].c_str(),
              static_cast<long long>(counts->complete_events),
              static_cast<long long>(counts->flows),
              static_cast<long long>(counts->counter_events));
  return kExitSuccess;
}

}  // namespace

std::string TraceHelp() {
  return "usage: softwire trace summary FILE\n"
         "       softwire trace render FILE -o OUT.svg|OUT.html   (-o or --output)\n"
         "       softwire trace check FILE\n"
         "\n"
         "Reads an actor trace written by `softwire run --trace FILE` (Chrome Trace Event\n"
         "Format; Perfetto and chrome://tracing open it too).\n"
         "\n"
         "  summary  utilization per device; busy/starved/blocked/queued shares per actor; the\n"
         "           critical path and the bottleneck actor; the pipeline bubble beside\n"
         "           (p-1)/(m+p-1); memory high-water per device beside the plan\n"
         "  render   a timeline (.svg: a row per device queue, firings coloured by actor kind) or\n"
         "           a self-contained report (.html: the timeline and the summary's tables)\n"
         "  check    the file's promises: JSON, X slices with dur >= 0 that nest per thread,\n"
         "           flows with both ends inside slices\n"
         "\n"
         "exit codes: 0 success; 2 bad input (a missing, unreadable or malformed trace file,\n"
         "named in the message; a bad flag).\n";
}

int TraceCommand(const std::vector<std::string>& args) {
  if (args.empty()) return BadUsage("no subcommand given");
  const std::string subcommand = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (subcommand == "summary") return Summary(rest);
  if (subcommand == "render") return Render(rest);
  if (subcommand == "check") return Check(rest);
  if (subcommand == "--help" || subcommand == "help") {
    std::fputs(TraceHelp().c_str(), stdout);
    return kExitSuccess;
  }
  return BadUsage("unknown subcommand '" + subcommand + "'");
}

}  // namespace cli
}  // namespace softwire
