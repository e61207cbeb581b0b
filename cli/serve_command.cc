// `softwire serve`: the job service. Hosts this machine's devices (or a cluster spec's), keeps
// job records in a state directory, and serves JobService, Diagnostics, health and reflection
// on one gRPC address until SIGINT or SIGTERM.
//
//   softwire serve --listen 127.0.0.1:7070 --data-root ~/datasets &
//   softwire submit demos/digits/digits.pbtxt --to 127.0.0.1:7070
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "base/file.h"
#include "base/format_bytes.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/flag_parser.h"
#include "cli/interrupt_watcher.h"
#include "cli/server_connection.h"
#include "placement/cluster_spec.h"
#include "runtime/rpc/rpc_status.h"
#include "service/job_manager.h"
#include "service/node_registry.h"
#include "service/rpc/job_server.h"
#include "service/web/web_server.h"

namespace softwire {
namespace cli {
namespace {

struct ServeFlags {
  std::string listen = "127.0.0.1:7070";
  std::string http;  // Empty: no web view.
  std::string web_assets;
  std::string cluster;
  std::string state_dir;  // Empty: DefaultStateDirectory().
  std::string data_root;
  std::string tls_cert;
  std::string tls_key;
  std::string token_file;
  int64_t max_queued = service::JobLimits().max_queued_jobs;
  int64_t max_upload_bytes = service::JobLimits().max_upload_bytes;
  int64_t max_job_bytes = service::JobLimits().max_job_bytes;
  int64_t blas_threads = 0;
  int64_t nodes = 0;
  bool help = false;
};

FlagParser MakeParser(ServeFlags* flags) {
  FlagParser parser;
  parser.AddString("listen", &flags->listen, "ADDR",
                   "serve on ADDR (default 127.0.0.1:7070; port 0: a free port, printed)");
  parser.AddString("http", &flags->http, "ADDR",
                   "also serve the web view (jobs, curves, timeline, devices) on ADDR, e.g. "
                   "127.0.0.1:8080 (port 0: a free port, printed); the same TLS and token rules");
  parser.AddString("web-assets", &flags->web_assets, "DIR",
                   "serve the web view's pages from DIR instead of the built-in copies "
                   "(editing them without a rebuild)");
  parser.AddString("cluster", &flags->cluster, "SPEC",
                   "the devices jobs run on: a cluster file or a shorthand such as 4cpu or 8sim "
                   "(default: one cpu device of every core)");
  parser.AddString("state-dir", &flags->state_dir, "DIR",
                   "keep job records, events and results in DIR (default "
                   "$XDG_STATE_HOME/softwire, else ~/.local/state/softwire)");
  parser.AddString("data-root", &flags->data_root, "DIR",
                   "jobs may read files under DIR without sending them (default: none; a job "
                   "uses only the data it sends)");
  parser.AddString("tls-cert", &flags->tls_cert, "FILE", "serve TLS with this certificate (PEM)");
  parser.AddString("tls-key", &flags->tls_key, "FILE", "the certificate's private key (PEM)");
  parser.AddString("token-file", &flags->token_file, "FILE",
                   "refuse calls that do not carry the token in FILE (metadata 'authorization: "
                   "Bearer TOKEN')");
  parser.AddInt("max-queued", &flags->max_queued, "N",
                "refuse submissions while N jobs wait for devices (default 256)");
  parser.AddInt("max-upload-bytes", &flags->max_upload_bytes, "N",
                "refuse submissions whose data files together exceed N bytes (default 256 MiB)");
  parser.AddInt("max-job-bytes", &flags->max_job_bytes, "N",
                "refuse job graphs larger than N bytes (default 4 MiB)");
  parser.AddInt("blas-threads", &flags->blas_threads, "N",
                "give OpenBLAS its own pool of N threads (default 0: the devices' threads)");
  parser.AddInt("nodes", &flags->nodes, "N",
                "run jobs on node agents (softwire node --join ADDR) instead of this process's "
                "devices, once N have joined (default 0: on this process's devices)");
  parser.AddBool("help", &flags->help, "show this help");
  return parser;
}

std::string DefaultStateDirectory() {
  const char* state_home = std::getenv("XDG_STATE_HOME");
  if (state_home != nullptr && *state_home != '\0') return std::string(state_home) + "/softwire";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && *home != '\0' ? home : ".") + "/.local/state/softwire";
}

Status CheckFlags(const ServeFlags& flags) {
  if (flags.tls_cert.empty() != flags.tls_key.empty()) {
    return InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!rpc::IsLoopbackAddress(flags.listen) &&
      (flags.tls_cert.empty() || flags.token_file.empty())) {
    return InvalidArgumentError(
        "--listen " + flags.listen +
        " is not a loopback address: listening on it needs TLS and a token (--tls-cert FILE "
        "--tls-key FILE --token-file FILE); without them listen on 127.0.0.1:PORT");
  }
  if (flags.max_queued < 0 || flags.max_upload_bytes < 0 || flags.max_job_bytes < 1) {
    return InvalidArgumentError(
        "--max-queued, --max-upload-bytes and --max-job-bytes must be >= 0");
  }
  if (flags.blas_threads < 0) return InvalidArgumentError("--blas-threads must be >= 0");
  if (flags.nodes < 0 || flags.nodes > 4096) {
    return InvalidArgumentError("--nodes must be between 0 and 4096");
  }
  if (flags.nodes > 0 && !flags.cluster.empty()) {
    return InvalidArgumentError(
        "--cluster and --nodes go apart: with --nodes the joined nodes' "
        "devices run the jobs");
  }
  return Status::Ok();
}

// The manager's options from the flags: InvalidArgument naming the flag when a file cannot be
// read or the cluster is bad.
StatusOr<service::JobManagerOptions> ManagerOptions(const ServeFlags& flags) {
  service::JobManagerOptions options;
  options.state_directory = flags.state_dir.empty() ? DefaultStateDirectory() : flags.state_dir;
  if (!flags.cluster.empty()) {
    StatusOr<proto::Cluster> cluster = placement::LoadClusterSpec(flags.cluster);
    if (!cluster.ok()) return cluster.status().WithContext("--cluster");
    options.cluster = *cluster;
  }
  options.data_root = flags.data_root;
  options.limits.max_queued_jobs = flags.max_queued;
  options.limits.max_upload_bytes = flags.max_upload_bytes;
  options.limits.max_job_bytes = flags.max_job_bytes;
  options.blas_threads = static_cast<int>(flags.blas_threads);
  return options;
}

StatusOr<service::JobServerOptions> ServerOptions(const ServeFlags& flags) {
  service::JobServerOptions options;
  options.address = flags.listen;
  if (!flags.tls_cert.empty()) {
    StatusOr<std::string> certificate = ReadFile(flags.tls_cert);
    if (!certificate.ok()) return InvalidArgumentError("--tls-cert: cannot read " + flags.tls_cert);
    StatusOr<std::string> key = ReadFile(flags.tls_key);
    if (!key.ok()) return InvalidArgumentError("--tls-key: cannot read " + flags.tls_key);
    options.tls_certificate = *certificate;
    options.tls_private_key = *key;
  }
  if (!flags.token_file.empty()) {
    SOFTWIRE_ASSIGN_OR_RETURN(options.token, ReadTokenFile(flags.token_file, "--token-file"));
  }
  return options;
}

// The web view's options: the gRPC server's TLS and token, so both sides follow one rule.
service::WebServerOptions WebOptions(const ServeFlags& flags,
                                     const service::JobServerOptions& server) {
  service::WebServerOptions options;
  options.address = flags.http;
  options.tls_certificate = server.tls_certificate;
  options.tls_private_key = server.tls_private_key;
  options.token = server.token;
  options.assets_directory = flags.web_assets;
  return options;
}

int Fail(const Status& status) {
  std::fprintf(stderr, "softwire serve: %s\n", status.message().c_str());
  return ExitCodeFor(status);
}

}  // namespace

std::string ServeHelp() {
  ServeFlags flags;
  return "usage: softwire serve [flags]\n"
         "\n"
         "Serves the job service until SIGINT or SIGTERM: clients submit jobs (softwire submit),\n"
         "watch, cancel and fetch them (softwire watch|cancel|fetch|jobs) and ask which actor\n"
         "waits for what (softwire diagnose ADDR --job ID). Jobs queue for the devices and run\n"
         "several at once on disjoint devices. Records, events, results and traces live in the\n"
         "state directory: a server stopped or killed and started again on it lists every job,\n"
         "runs the ones that were queued, and marks failed the ones that were running.\n"
         "\n"
         "flags:\n" +
         MakeParser(&flags).Help() +
         "\n"
         "It prints 'softwire serve: listening on ADDR' once it serves (after 'softwire serve:\n"
         "web view on URL' with --http; docs/WEB.md). It listens on\n"
         "loopback unless told otherwise; another address needs --tls-cert, --tls-key and\n"
         "--token-file. A job reads files only under --data-root or sent with it (paths outside,\n"
         "absolute, climbing with '..' or through a symlink, are refused). Limits: job graphs of\n"
         "--max-job-bytes, uploads of --max-upload-bytes, --max-queued waiting jobs; past them a\n"
         "submission gets RESOURCE_EXHAUSTED. Health (grpc.health.v1) and server reflection\n"
         "answer without the token.\n"
         "\n"
         "With --nodes N, jobs run on node agents (softwire node --join ADDR) instead: the\n"
         "server takes submissions once N nodes have joined, compiles each job for the joined\n"
         "nodes' devices and runs its shares on them; a node that dies or stops answering fails\n"
         "its job within seconds, naming it (docs/NODES.md).\n"
         "\n"
         "exit codes: 0 stopped by a signal; 2 bad flags, files or state directory; 1 it could\n"
         "not serve (the port is taken).\n";
}

int ServeCommand(const std::vector<std::string>& args) {
  ServeFlags flags;
  const FlagParser parser = MakeParser(&flags);
  std::vector<std::string> positional;
  Status parsed = parser.Parse(args, &positional);
  if (flags.help) {
    std::fputs(ServeHelp().c_str(), stdout);
    return kExitSuccess;
  }
  if (parsed.ok()) parsed = CheckFlags(flags);
  if (parsed.ok() && !positional.empty()) {
    parsed = InvalidArgumentError("takes no operand, got '" + positional[0] + "'");
  }
  if (!parsed.ok()) {
    std::fprintf(stderr,
                 "softwire serve: %s\nusage: softwire serve [flags]; see softwire help serve\n",
                 parsed.message().c_str());
    return kExitBadInput;
  }
  // Before the server exists: a signal that comes while it starts stops it once it has.
  StatusOr<std::unique_ptr<InterruptWatcher>> interrupts = InterruptWatcher::Install([](int) {});
  if (!interrupts.ok()) return Fail(interrupts.status());
  StatusOr<service::JobManagerOptions> manager_options = ManagerOptions(flags);
  if (!manager_options.ok()) return Fail(manager_options.status());
  StatusOr<service::JobServerOptions> server_options = ServerOptions(flags);
  if (!server_options.ok()) return Fail(server_options.status());
  const std::string state_directory = manager_options->state_directory;
  std::unique_ptr<service::NodeRegistry> nodes;
  if (flags.nodes > 0) {
    nodes = std::make_unique<service::NodeRegistry>();
    manager_options->nodes = nodes.get();
    manager_options->nodes_wanted = static_cast<int>(flags.nodes);
    server_options->nodes = nodes.get();
    server_options->nodes_wanted = static_cast<int32_t>(flags.nodes);
  }
  StatusOr<std::unique_ptr<service::JobManager>> jobs =
      service::JobManager::Start(std::move(*manager_options));
  if (!jobs.ok()) return Fail(jobs.status());
  // The web view first: a refused --http ends the command before the gRPC side listens.
  std::unique_ptr<service::WebServer> web;
  if (!flags.http.empty()) {
    StatusOr<std::unique_ptr<service::WebServer>> started =
        service::WebServer::Start(jobs->get(), WebOptions(flags, *server_options));
    if (!started.ok()) return Fail(started.status());
    web = std::move(*started);
  }
  StatusOr<std::unique_ptr<service::JobServer>> server =
      service::JobServer::Start(jobs->get(), std::move(*server_options));
  if (!server.ok()) return Fail(server.status());
  std::string devices;
  for (const proto::DeviceInfo& device : (*jobs)->ListDevices()) {
    devices += (devices.empty() ? "" : ", ") + device.device();
  }
  if (nodes != nullptr) {
    std::fprintf(stderr,
                 "softwire serve: state in %s; jobs run on node agents once %lld have joined "
                 "(softwire node --join %s); %lld jobs queued\n",
                 state_directory.c_str(), static_cast<long long>(flags.nodes),
                 (*server)->address().c_str(), static_cast<long long>((*jobs)->QueuedJobs()));
  } else {
    std::fprintf(stderr, "softwire serve: state in %s; devices %s; %lld jobs queued\n",
                 state_directory.c_str(), devices.c_str(),
                 static_cast<long long>((*jobs)->QueuedJobs()));
  }
  if (web != nullptr) std::printf("softwire serve: web view on %s\n", web->url().c_str());
  std::printf("softwire serve: listening on %s\n", (*server)->address().c_str());
  std::fflush(stdout);
  const int signal = (*interrupts)->Wait();
  std::fprintf(stderr,
               "softwire serve: %s: stopping (running jobs are cancelled, queued ones "
               "stay queued)\n",
               signal == SIGINT ? "SIGINT" : "SIGTERM");
  web.reset();
  server->reset();  // No call reaches the manager any more...
  jobs->reset();    // ...before it goes...
  nodes.reset();    // ...and the nodes last: the manager's runs use them.
  return kExitSuccess;
}

}  // namespace cli
}  // namespace softwire
