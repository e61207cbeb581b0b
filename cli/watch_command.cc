// `softwire watch ID --to ADDR`: follows a served job from its first event to its end, as
// `softwire submit` does.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/flag_parser.h"
#include "cli/interrupt_watcher.h"
#include "cli/job_feed.h"
#include "cli/server_connection.h"

namespace softwire {
namespace cli {
namespace {

struct WatchFlags {
  ServerFlags server;
  std::string metrics_out;
  bool quiet = false;
  int64_t log_every = 0;
  bool help = false;
};

FlagParser MakeParser(WatchFlags* flags) {
  FlagParser parser;
  AddServerFlags(&parser, &flags->server);
  parser.AddString("metrics-out", &flags->metrics_out, "FILE",
                   "write one JSON object per step to FILE, as softwire run does");
  parser.AddBool("quiet", &flags->quiet, "print nothing but errors");
  parser.AddInt("log-every", &flags->log_every, "N",
                "print a progress line every N steps (default: about 20 lines)");
  parser.AddBool("help", &flags->help, "show this help");
  return parser;
}

}  // namespace

std::string WatchHelp() {
  WatchFlags flags;
  return "usage: softwire watch ID [flags]\n"
         "\n"
         "Follows job ID of a server from its first event to its end, printing what softwire\n"
         "submit prints (a progress bar on a terminal). Ctrl-C stops watching; the job goes on.\n"
         "\n"
         "flags:\n" +
         MakeParser(&flags).Help() +
         "\n"
         "exit codes: 0 the job succeeded; 1 it failed or was cancelled, or the server could\n"
         "not be reached; 2 bad flags or an unknown job.\n";
}

int WatchCommand(const std::vector<std::string>& args) {
  WatchFlags flags;
  const FlagParser parser = MakeParser(&flags);
  auto check = [&]() -> Status {
    if (flags.log_every < 0) return InvalidArgumentError("--log-every must be at least 1");
    return CheckMetricsOutput(flags.metrics_out);
  };
  const CommandLineSpec spec{"watch", "ID",        "job id",  "job-3",
                             &parser, &flags.help, WatchHelp, check};
  std::string job_id;
  if (std::optional<int> exit = ReadCommandLine(spec, args, &job_id)) return *exit;
  StatusOr<service::JobClientOptions> options = ClientOptionsFor(flags.server);
  if (!options.ok()) {
    std::fprintf(stderr, "softwire watch: %s\n", options.status().message().c_str());
    return kExitBadInput;
  }
  std::atomic<service::JobClient*> watched_client{nullptr};
  StatusOr<std::unique_ptr<InterruptWatcher>> interrupts = InterruptWatcher::Install([&](int) {
    if (service::JobClient* client = watched_client.load()) client->StopWatching();
  });
  service::JobClient client(*options);
  watched_client = &client;
  FeedOptions feed;
  feed.command = "watch";
  feed.progress_bar = isatty(STDOUT_FILENO) != 0;
  feed.log_every = flags.log_every;
  feed.quiet = flags.quiet;
  feed.metrics_out = flags.metrics_out;
  StatusOr<FeedOutcome> outcome = FollowJob(&client, job_id, feed);
  if (!outcome.ok()) {
    std::fprintf(stderr, "softwire watch: %s\n", outcome.status().message().c_str());
    return ExitCodeFor(outcome.status());
  }
  return ReportOutcome("watch", job_id, *outcome);
}

}  // namespace cli
}  // namespace softwire
