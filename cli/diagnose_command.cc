// `softwire diagnose ADDR`: asks a job started with `softwire run --listen ADDR`, or job ID of a
// `softwire serve` at ADDR (--job ID), which actors wait on what, and prints the report (the
// format of SIGUSR1 and of the stall watchdog).
//
//   softwire run job.pbtxt --listen 127.0.0.1:7070 &
//   softwire diagnose 127.0.0.1:7070
//   softwire diagnose 127.0.0.1:7070 --job job-3   # a served job
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/flag_parser.h"
#include "cli/server_connection.h"
#include "runtime/rpc/diagnostics_client.h"

namespace softwire {
namespace cli {
namespace {

struct DiagnoseFlags {
  double timeout = 5;
  int64_t clock_probes = 0;
  std::string job;
  ServerFlags server;  // Its token file and CA; the address is the operand.
  bool help = false;
};

FlagParser MakeParser(DiagnoseFlags* flags) {
  FlagParser parser;
  parser.AddDouble("timeout", &flags->timeout, "SECONDS",
                   "give up after this long (default 5); every call has this deadline");
  parser.AddInt("clock", &flags->clock_probes, "N",
                "also estimate the node's clock offset from this machine over N probes");
  parser.AddString("job", &flags->job, "ID",
                   "the job to ask about, on a server that runs several (softwire serve)");
  parser.AddString("token-file", &flags->server.token_file, "FILE",
                   "send the token in FILE (a server started with --token-file)");
  parser.AddString("tls-ca", &flags->server.tls_ca, "FILE",
                   "speak TLS, trusting the authority whose certificate (PEM) is in FILE");
  parser.AddBool("help", &flags->help, "show this help");
  return parser;
}

}  // namespace

std::string DiagnoseHelp() {
  DiagnoseFlags flags;
  return "usage: softwire diagnose ADDR [flags]\n"
         "\n"
         "Asks the job served at ADDR (softwire run --listen ADDR; or with --job ID, job ID of\n"
         "softwire serve --listen ADDR) what each unfinished actor\n"
         "waits for: its input from a producer (starved), a free slot its consumers hold\n"
         "(blocked), or its device (running). The job keeps running.\n"
         "\n"
         "flags:\n" +
         MakeParser(&flags).Help() +
         "\n"
         "exit codes: 0 success; 1 no answer (nothing listens, the deadline passed, no job is\n"
         "running); 2 bad flags.\n";
}

int DiagnoseCommand(const std::vector<std::string>& args) {
  DiagnoseFlags flags;
  auto check_flags = [&]() -> Status {
    if (!(flags.timeout > 0) || std::isinf(flags.timeout) || flags.timeout > 3600) {
      return InvalidArgumentError("--timeout must be a number of seconds in (0, 3600]");
    }
    if (flags.clock_probes < 0 || flags.clock_probes > 1000) {
      return InvalidArgumentError("--clock takes 1 to 1000 probes");
    }
    return Status::Ok();
  };
  const FlagParser parser = MakeParser(&flags);
  const CommandLineSpec spec{"diagnose", "ADDR",      "address",    "127.0.0.1:7070",
                             &parser,    &flags.help, DiagnoseHelp, check_flags};
  std::string address;
  if (std::optional<int> exit = ReadCommandLine(spec, args, &address)) return *exit;
  const auto deadline = std::chrono::milliseconds(static_cast<int64_t>(flags.timeout * 1000));
  flags.server.to = address;
  StatusOr<service::JobClientOptions> client = ClientOptionsFor(flags.server);
  if (!client.ok()) {
    std::fprintf(stderr, "softwire diagnose: %s\n", client.status().message().c_str());
    return kExitBadInput;
  }
  rpc::DiagnosticsCallOptions call;
  call.job_id = flags.job;
  call.security = client->security;
  StatusOr<proto::GetWaitStatesResponse> states = rpc::GetWaitStates(address, deadline, call);
  if (!states.ok()) {
    std::fprintf(stderr, "softwire diagnose: %s\n", states.status().message().c_str());
    return kExitRunFailed;
  }
  std::printf("%s\n", states->report().c_str());
  if (flags.clock_probes > 0) {
    StatusOr<trace::ClockOffset> offset = rpc::EstimateRemoteClockOffset(
        address, static_cast<int>(flags.clock_probes), deadline, call.security);
    if (!offset.ok()) {
      std::fprintf(stderr, "softwire diagnose: %s\n", offset.status().message().c_str());
      return kExitRunFailed;
    }
    std::printf("clock offset of %s: %+.3f ms +- %.3f ms (fastest of %d round trips: %.3f ms)\n",
                address.c_str(), offset->offset_ns / 1e6, offset->error_ns / 1e6, offset->probes,
                offset->round_trip_ns / 1e6);
  }
  return kExitSuccess;
}

}  // namespace cli
}  // namespace softwire
