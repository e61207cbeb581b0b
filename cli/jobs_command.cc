// `softwire jobs --to ADDR`: the jobs of a server, newest first; `--devices`: its devices and
// which job holds each.
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "base/format_bytes.h"
#include "cli/commands.h"
#include "cli/flag_parser.h"
#include "cli/server_connection.h"

namespace softwire {
namespace cli {
namespace {

struct JobsFlags {
  ServerFlags server;
  int64_t limit = 0;
  bool devices = false;
  bool nodes = false;
  bool help = false;
};

FlagParser MakeParser(JobsFlags* flags) {
  FlagParser parser;
  AddServerFlags(&parser, &flags->server);
  parser.AddInt("limit", &flags->limit, "N", "list the N newest jobs only");
  parser.AddBool("devices", &flags->devices,
                 "list the server's devices instead: which job holds each, its memory");
  parser.AddBool("nodes", &flags->nodes,
                 "list the node agents that joined the server instead (serve --nodes N)");
  parser.AddBool("help", &flags->help, "show this help");
  return parser;
}

std::string StateName(proto::JobState state) {
  std::string name = proto::JobState_Name(state);
  return name.rfind("JOB_STATE_", 0) == 0 ? name.substr(10) : name;
}

// "2026-11-25 12:34:56" in UTC; "-" for 0.
std::string TimeText(double unix_seconds) {
  if (unix_seconds <= 0) return "-";
  const std::time_t seconds = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &utc);
  return text;
}

void PrintJobs(const std::vector<proto::JobInfo>& jobs) {
  std::printf("%-10s %-10s %-20s %13s %12s  %s\n", "ID", "STATE", "NAME", "STEPS", "LOSS",
              "SUBMITTED (UTC)");
  for (const proto::JobInfo& job : jobs) {
    const std::string steps =
        std::to_string(job.completed_steps()) + "/" + std::to_string(job.steps());
    char loss[32] = "-";
    if (job.completed_steps() > 0 && !std::isnan(job.last_loss())) {
      std::snprintf(loss, sizeof(loss), "%.6f", job.last_loss());
    }
    std::printf("%-10s %-10s %-20s %13s %12s  %s\n", job.job_id().c_str(),
                StateName(job.state()).c_str(), job.name().c_str(), steps.c_str(), loss,
                TimeText(job.submitted_unix()).c_str());
    if (job.max_restarts() > 0) {
      std::printf("           restarted %d of at most %d times after a lost node\n", job.restarts(),
                  job.max_restarts());
    }
    if (!job.error().empty()) std::printf("           %s\n", job.error().c_str());
  }
}

void PrintDevices(const proto::ListDevicesResponse& devices) {
  std::printf("%-16s %-5s %6s %12s %12s  %s\n", "DEVICE", "KIND", "CORES", "MEMORY", "ALLOCATED",
              "JOB");
  for (const proto::DeviceInfo& device : devices.device()) {
    std::printf("%-16s %-5s %6d %12s %12s  %s\n", device.device().c_str(), device.kind().c_str(),
                device.cores(),
                device.memory_bytes() > 0 ? FormatBytes(device.memory_bytes()).c_str() : "-",
                FormatBytes(device.allocated_bytes()).c_str(),
                device.job_id().empty() ? "-" : device.job_id().c_str());
    if (!device.available()) std::printf("%-16s (its node is away)\n", "");
  }
  std::printf("%lld jobs queued\n", static_cast<long long>(devices.queued_jobs()));
}

void PrintNodes(const proto::ListNodesResponse& nodes) {
  std::printf("%-12s %-16s %8s %-22s %9s %12s %9s  %s\n", "NODE", "HOST", "PID", "DATA PLANE",
              "HEARTBEAT", "CLOCK", "RTT", "DEVICES");
  for (const proto::NodeInfo& node : nodes.node()) {
    std::string devices;
    for (const proto::DeviceSpec& device : node.node().device()) {
      devices += (devices.empty() ? "" : ", ") + device.name();
    }
    char heartbeat[32];
    std::snprintf(heartbeat, sizeof(heartbeat), "%.1f s ago", node.heartbeat_age_seconds());
    char offset[32] = "-";
    char round_trip[32] = "-";
    if (node.clock_probes() > 0) {
      std::snprintf(offset, sizeof(offset), "%+.3f ms", node.clock_offset_seconds() * 1e3);
      std::snprintf(round_trip, sizeof(round_trip), "%.3f ms",
                    node.clock_round_trip_seconds() * 1e3);
    }
    std::printf("%-12s %-16s %8lld %-22s %9s %12s %9s  %s\n", node.node().name().c_str(),
                node.node().address().c_str(), static_cast<long long>(node.pid()),
                node.data_plane_address().empty() ? "-" : node.data_plane_address().c_str(),
                heartbeat, offset, round_trip, devices.c_str());
  }
  std::printf("%d nodes joined; the server waits for %d\n", nodes.node_size(),
              nodes.nodes_wanted());
}

}  // namespace

std::string JobsHelp() {
  JobsFlags flags;
  return "usage: softwire jobs [flags]\n"
         "\n"
         "Lists the jobs of a server (softwire serve), newest first: id, state, name, steps\n"
         "done, last loss, when submitted, and why a job failed. --devices lists the devices;\n"
         "--nodes the node agents that joined (their clock offset is the node's clock minus the\n"
         "server's, from the clock probe with the shortest round trip).\n"
         "\n"
         "flags:\n" +
         MakeParser(&flags).Help() +
         "\n"
         "exit codes: 0 success; 2 bad flags; 1 the server could not be reached.\n";
}

int JobsCommand(const std::vector<std::string>& args) {
  JobsFlags flags;
  const FlagParser parser = MakeParser(&flags);
  std::vector<std::string> positional;
  Status parsed = parser.Parse(args, &positional);
  if (flags.help) {
    std::fputs(JobsHelp().c_str(), stdout);
    return kExitSuccess;
  }
  if (parsed.ok() && flags.limit < 0) parsed = InvalidArgumentError("--limit must be >= 0");
  if (parsed.ok() && !positional.empty()) {
    parsed = InvalidArgumentError("takes no operand, got '" + positional[0] + "'");
  }
  StatusOr<service::JobClientOptions> options = InvalidArgumentError("");
  if (parsed.ok()) {
    options = ClientOptionsFor(flags.server);
    parsed = options.status();
  }
  if (!parsed.ok()) {
    std::fprintf(stderr,
                 "softwire jobs: %s\nusage: softwire jobs [flags]; see softwire help jobs\n",
                 parsed.message().c_str());
    return kExitBadInput;
  }
  service::JobClient client(*options);
  if (flags.nodes) {
    StatusOr<proto::ListNodesResponse> nodes = client.ListNodes();
    if (!nodes.ok()) {
      std::fprintf(stderr, "softwire jobs: %s\n", nodes.status().message().c_str());
      return ExitCodeFor(nodes.status());
    }
    PrintNodes(*nodes);
    return kExitSuccess;
  }
  if (flags.devices) {
    StatusOr<proto::ListDevicesResponse> devices = client.ListDevices();
    if (!devices.ok()) {
      std::fprintf(stderr, "softwire jobs: %s\n", devices.status().message().c_str());
      return ExitCodeFor(devices.status());
    }
    PrintDevices(*devices);
    return kExitSuccess;
  }
  StatusOr<std::vector<proto::JobInfo>> jobs = client.ListJobs({}, static_cast<int>(flags.limit));
  if (!jobs.ok()) {
    std::fprintf(stderr, "softwire jobs: %s\n", jobs.status().message().c_str());
    return ExitCodeFor(jobs.status());
  }
  PrintJobs(*jobs);
  return kExitSuccess;
}

}  // namespace cli
}  // namespace softwire
