// Trace file benchmark: how long the Chrome trace of a long run takes to write
// (ExportChromeTrace), to read back into its model (ParseChromeTrace, the streamed parse of
// `softwire trace summary`) and to check (CheckChromeTrace, a whole-document parse), and the
// peak memory the process reached. The trace is a synthetic barrier pipeline
// (trace/testing/synthetic_traces.h): firings, waits, slot counters and flows as an engine
// records them.
//
//   build/bench/trace/trace_file_bench                      # 4 stages x 64 pieces x 400 steps
//   build/bench/trace/trace_file_bench --steps 100 --repeats 3
//
// Prints the file's size and event counts, then the median seconds and MB/s of each of the
// three over the repeats; last, the firing events alone written with trace/json.h's append
// helpers and built as nlohmann::ordered_json and dumped, the choice trace/json.h records.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "trace/chrome_trace.h"
#include "trace/chrome_trace_check.h"
#include "trace/json.h"
#include "trace/testing/synthetic_traces.h"

namespace softwire {
namespace {

struct BenchSetting {
  int stages = 4;
  int64_t pieces_per_step = 64;
  int64_t steps = 400;
  int repeats = 5;
};

double MedianSeconds(int repeats, const std::function<void()>& run) {
  std::vector<double> seconds;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    run();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

long PeakResidentMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;  // Linux reports KiB.
}

// The firing events of ExportChromeTrace (their main fields), written both ways.
void CompareWriters(const trace::TraceModel& model, int repeats) {
  size_t hand_bytes = 0;
  const double hand_seconds = MedianSeconds(repeats, [&] {
    std::string out;
    for (const trace::FiringRecord& firing : model.firings) {
      const trace::ActorFacts& actor = model.plan.actors[static_cast<size_t>(firing.actor)];
      out.append("{\"name\":");
      trace::AppendJsonString(&out, actor.name);
      out.append(",\"cat\":");
      trace::AppendJsonString(&out, actor.kind);
      out.append(",\"ph\":\"X\",\"pid\":");
      trace::AppendInt(&out, actor.device + 1);
      out.append(",\"tid\":");
      trace::AppendInt(&out, actor.queue);
      out.append(",\"ts\":");
      trace::AppendMicros(&out, firing.start);
      out.append(",\"dur\":");
      trace::AppendMicros(&out, firing.end - firing.start);
      out.append(",\"args\":{\"actor\":");
      trace::AppendInt(&out, firing.actor);
      out.append(",\"op\":");
      trace::AppendJsonString(&out, actor.op_type);
      out.append(",\"firing\":");
      trace::AppendInt(&out, firing.firing);
      out.append(",\"reads\":");
      trace::AppendIntArray(&out, actor.inputs);
      out.append(",\"writes\":");
      trace::AppendIntArray(&out, actor.outputs);
      out.append(",\"queued_us\":");
      trace::AppendMicros(&out, firing.start - firing.launch);
      out.append(",\"cause_actor\":");
      trace::AppendInt(&out, firing.cause.actor);
      out.append("}},\n");
    }
    hand_bytes = out.size();
  });
  size_t dumped_bytes = 0;
  const double dumped_seconds = MedianSeconds(repeats, [&] {
    std::string out;
    for (const trace::FiringRecord& firing : model.firings) {
      const trace::ActorFacts& actor = model.plan.actors[static_cast<size_t>(firing.actor)];
      trace::Json event;
      event["name"] = actor.name;
      event["cat"] = actor.kind;
      event["ph"] = "X";
      event["pid"] = actor.device + 1;
      event["tid"] = actor.queue;
      event["ts"] = static_cast<double>(firing.start) / 1000.0;
      event["dur"] = static_cast<double>(firing.end - firing.start) / 1000.0;
      trace::Json& args = event["args"];
      args["actor"] = firing.actor;
      args["op"] = actor.op_type;
      args["firing"] = firing.firing;
      args["reads"] = actor.inputs;
      args["writes"] = actor.outputs;
      args["queued_us"] = static_cast<double>(firing.start - firing.launch) / 1000.0;
      args["cause_actor"] = firing.cause.actor;
      out += event.dump();
      out += ",\n";
    }
    dumped_bytes = out.size();
  });
  std::printf(
      "%zu firing events: append helpers %.3f s (%.0f MB/s); nlohmann dump %.3f s "
      "(%.0f MB/s)\n",
      model.firings.size(), hand_seconds, static_cast<double>(hand_bytes) / 1e6 / hand_seconds,
      dumped_seconds, static_cast<double>(dumped_bytes) / 1e6 / dumped_seconds);
}

int Main(int argc, char** argv) {
  BenchSetting setting;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long long value = std::atoll(argv[i + 1]);
    if (flag == "--stages") {
      setting.stages = static_cast<int>(value);
    } else if (flag == "--pieces") {
      setting.pieces_per_step = value;
    } else if (flag == "--steps") {
      setting.steps = value;
    } else if (flag == "--repeats") {
      setting.repeats = static_cast<int>(value);
    } else {
      std::fprintf(stderr, "unknown flag %s (--stages, --pieces, --steps, --repeats)\n",
                   flag.c_str());
      return 2;
    }
  }
  std::vector<int64_t> stage_ns(static_cast<size_t>(setting.stages), 1500);
  trace::TraceLog log = trace::testing::BarrierPipeline(setting.stages, setting.pieces_per_step,
                                                        setting.steps, stage_ns);
  StatusOr<trace::TraceModel> model = trace::BuildTraceModel(log);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  const std::string text = trace::ExportChromeTrace(*model);
  const double megabytes = static_cast<double>(text.size()) / 1e6;
  std::printf("trace: %.1f MB; %zu firings, %zu waits, %zu counters, %zu flows; peak RSS %ld MiB\n",
              megabytes, model->firings.size(), model->waits.size(), model->counters.size(),
              model->flows.size(), PeakResidentMiB());

  const double export_seconds = MedianSeconds(setting.repeats, [&] {
    std::string again = trace::ExportChromeTrace(*model);
    if (again.size() != text.size()) std::abort();
  });
  std::printf("export: %.3f s (%.0f MB/s)\n", export_seconds, megabytes / export_seconds);
  const double read_seconds = MedianSeconds(setting.repeats, [&] {
    StatusOr<trace::TraceModel> read = trace::ParseChromeTrace(text, "bench");
    if (!read.ok() || read->firings.size() != model->firings.size()) std::abort();
  });
  std::printf("read (streamed): %.3f s (%.0f MB/s); peak RSS %ld MiB\n", read_seconds,
              megabytes / read_seconds, PeakResidentMiB());
  const double check_seconds = MedianSeconds(setting.repeats, [&] {
    StatusOr<trace::ChromeTraceCounts> counts = trace::CheckChromeTrace(text);
    if (!counts.ok()) std::abort();
  });
  std::printf("check (whole document): %.3f s (%.0f MB/s); peak RSS %ld MiB\n", check_seconds,
              megabytes / check_seconds, PeakResidentMiB());
  CompareWriters(*model, setting.repeats);
  return 0;
}

}  // namespace
}  // namespace softwire

int main(int argc, char** argv) {
  return softwire::Main(argc, argv);
}
