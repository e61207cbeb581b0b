// `softwire node --join ADDR`: a node agent. It hosts this host's devices (or --devices), joins
// the job server at ADDR, and runs the shares of jobs the server sends it until SIGINT or
// SIGTERM (service/node_agent.h, service/rpc/node_connection.h; docs/NODES.md).
//
//   softwire serve --listen 127.0.0.1:7070 --nodes 2 &
//   softwire node --join 127.0.0.1:7070 --name node0 &
//   softwire node --join 127.0.0.1:7070 --name node1 &
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <string>
#include <vector>

#include "base/thread_affinity.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/flag_parser.h"
#include "cli/interrupt_watcher.h"
#include "cli/server_connection.h"
#include "placement/cluster_spec.h"
#include "runtime/host/node_runtime.h"
#include "runtime/host/node_runtime_options.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/net/data_plane.h"
#include "service/node_agent.h"
#include "service/node_registry.h"
#include "service/rpc/node_connection.h"

namespace softwire {
namespace cli {
namespace {

struct NodeFlags {
  std::string join;
  std::string name;  // Empty: this host's name.
  std::string devices;
  std::string data_plane = "127.0.0.1:0";
  std::string token_file;
  std::string tls_ca;
  int64_t blas_threads = 0;
  int64_t caf_threads = 0;
  bool help = false;
};

FlagParser MakeParser(NodeFlags* flags) {
  FlagParser parser;
  parser.AddString("join", &flags->join, "ADDR",
                   "the job server to join (softwire serve --nodes N); required");
  parser.AddString("name", &flags->name, "NAME",
                   "the node's name, unique among the server's nodes (default: this host's name)");
  parser.AddString("devices", &flags->devices, "SPEC",
                   "the devices it hosts: a one-node cluster file or a shorthand such as 2cpu or "
                   "4sim (default: one cpu device of every core, as softwire run)");
  parser.AddString("data-plane", &flags->data_plane, "ADDR",
                   "where the data plane listens for the other nodes (default 127.0.0.1:0: a "
                   "free loopback port)");
  parser.AddString("token-file", &flags->token_file, "FILE",
                   "send the token in FILE with every call (the server's --token-file)");
  parser.AddString("tls-ca", &flags->tls_ca, "FILE",
                   "check the server's TLS certificate against this authority (PEM)");
  parser.AddInt("blas-threads", &flags->blas_threads, "N",
                "give OpenBLAS its own pool of N threads (default 0: the devices' threads)");
  parser.AddInt("caf-threads", &flags->caf_threads, "N",
                "CAF scheduler threads (default 0: one per cpu device, at most the cores, and "
                "one in reserve, which handles transfers while every other runs a long kernel: "
                "docs/DECISIONS.md 37)");
  parser.AddBool("help", &flags->help, "show this help");
  return parser;
}

std::string HostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "node";
  return name;
}

// The node's devices: the spec's (one node), renamed to `name`.
StatusOr<proto::NodeSpec> NodeDevices(const NodeFlags& flags, const std::string& name) {
  proto::Cluster cluster = placement::SingleCpuCluster(static_cast<int>(AllowedCores().size()));
  if (!flags.devices.empty()) {
    StatusOr<proto::Cluster> loaded = placement::LoadClusterSpec(flags.devices);
    if (!loaded.ok()) return loaded.status().WithContext("--devices");
    cluster = std::move(*loaded);
  }
  if (cluster.node_size() != 1) {
    return InvalidArgumentError("--devices " + flags.devices +
                                ": a node hosts the devices of one "
                                "node, but the spec has " +
                                std::to_string(cluster.node_size()));
  }
  proto::NodeSpec node = cluster.node(0);
  node.set_name(name);
  node.set_address(HostName());
  return node;
}

int Fail(const Status& status) {
  std::fprintf(stderr, "softwire node: %s\n", status.message().c_str());
  return ExitCodeFor(status);
}

}  // namespace

std::string NodeHelp() {
  NodeFlags flags;
  return "usage: softwire node --join ADDR [flags]\n"
         "\n"
         "A node agent: hosts this host's devices for a job server (softwire serve --nodes N)\n"
         "until SIGINT or SIGTERM. It joins the server (nodes dial out; the server never dials\n"
         "them), sends a heartbeat every 0.5 s, hosts the share of each job the server sends it,\n"
         "runs it with the other nodes, reports its sinks' values, and frees the job's actors\n"
         "and memory when the job ends, however it ends. If the server goes away or stops\n"
         "answering (2.5 s), the node aborts its jobs, frees them, and joins again, retrying\n"
         "until it is stopped.\n"
         "\n"
         "flags:\n" +
         MakeParser(&flags).Help() +
         "\n"
         "It prints 'softwire node: joined ADDR as node NAME' each time it joins. Jobs read\n"
         "their data at the server's paths: run nodes on the server's host or on a shared file\n"
         "system.\n"
         "\n"
         "exit codes: 0 stopped by a signal; 2 bad flags or devices, or the server refused the\n"
         "node for good (another protocol version, a bad token).\n";
}

int NodeCommand(const std::vector<std::string>& args) {
  NodeFlags flags;
  const FlagParser parser = MakeParser(&flags);
  std::vector<std::string> positional;
  Status parsed = parser.Parse(args, &positional);
  if (flags.help) {
    std::fputs(NodeHelp().c_str(), stdout);
    return kExitSuccess;
  }
  if (parsed.ok() && flags.join.empty()) parsed = InvalidArgumentError("--join ADDR is required");
  if (parsed.ok() && !positional.empty()) {
    parsed = InvalidArgumentError("takes no operand, got '" + positional[0] + "'");
  }
  if (parsed.ok() && flags.blas_threads < 0) {
    parsed = InvalidArgumentError("--blas-threads must be >= 0");
  }
  if (parsed.ok() && flags.caf_threads < 0) {
    parsed = InvalidArgumentError("--caf-threads must be >= 0");
  }
  if (!parsed.ok()) {
    std::fprintf(stderr,
                 "softwire node: %s\nusage: softwire node --join ADDR [flags]; see "
                 "softwire help node\n",
                 parsed.message().c_str());
    return kExitBadInput;
  }
  const std::string name = flags.name.empty() ? HostName() : flags.name;
  StatusOr<proto::NodeSpec> node = NodeDevices(flags, name);
  if (!node.ok()) return Fail(node.status());
  ServerFlags server;
  server.to = flags.join;
  server.token_file = flags.token_file;
  server.tls_ca = flags.tls_ca;
  StatusOr<service::JobClientOptions> client = ClientOptionsFor(server);
  if (!client.ok()) return Fail(client.status());

  runtime::KernelRegistry cpu_kernels;
  RegisterCpuKernels(&cpu_kernels);
  proto::Cluster cluster;
  *cluster.add_node() = *node;
  runtime::HostingOptions hosting;
  hosting.kernels.cpu = &cpu_kernels;
  hosting.blas_threads = static_cast<int>(flags.blas_threads);
  // Bytes and messages from the other nodes are handled while a kernel runs.
  hosting.caf.transfer_worker = true;
  hosting.caf.max_threads = static_cast<int>(flags.caf_threads);
  StatusOr<std::unique_ptr<runtime::NodeRuntime>> runtime = runtime::NodeRuntime::Create(
      runtime::NodeRuntimeOptionsFor(runtime::ClusterDeviceSpecs(cluster), hosting));
  if (!runtime.ok()) return Fail(runtime.status().WithContext("--devices"));

  // The other nodes of a job reach this one's share through its data plane.
  runtime::net::DataPlaneOptions plane_options;
  plane_options.listen_address = flags.data_plane;
  // Every node of a job listens before the server asks any to attach, so a peer that does not
  // answer in 3 s is gone; a shorter wait frees this node's share sooner (an attach in progress
  // cannot be interrupted by a release).
  plane_options.connect_timeout = std::chrono::seconds(3);
  StatusOr<std::unique_ptr<runtime::net::DataPlane>> plane =
      runtime::net::DataPlane::Create(runtime->get(), plane_options);
  if (!plane.ok()) return Fail(plane.status().WithContext("--data-plane"));
  runtime::net::DataPlane* data_plane = plane->get();

  service::NodeConnectionOptions options;
  options.server_address = flags.join;
  options.security = client->security;
  options.join.set_protocol_version(service::kNodeProtocolVersion);
  *options.join.mutable_node() = *node;
  options.join.set_data_plane_address(data_plane == nullptr ? "" : data_plane->address());
  options.join.set_pid(static_cast<int64_t>(getpid()));
  options.log = [](const std::string& line) {
    std::fprintf(stderr, "softwire node: %s\n", line.c_str());
  };
  service::NodeConnection* connection_for_agent = nullptr;
  service::NodeAgentOptions agent_options;
  agent_options.runtime = runtime->get();
  agent_options.data_plane = data_plane;
  agent_options.send = [&connection_for_agent](proto::NodeReport report) {
    connection_for_agent->Send(std::move(report));
  };
  auto agent = std::make_unique<service::NodeAgent>(std::move(agent_options));
  service::NodeConnection connection(options, agent.get());
  connection_for_agent = &connection;

  StatusOr<std::unique_ptr<InterruptWatcher>> interrupts =
      InterruptWatcher::Install([&connection](int) { connection.Stop(); });
  if (!interrupts.ok()) return Fail(interrupts.status());
  std::string devices;
  for (const proto::DeviceSpec& device : node->device()) {
    devices += (devices.empty() ? "" : ", ") + name + "/" + device.name();
  }
  std::fprintf(stderr, "softwire node: node '%s' (pid %d) with %s; joining %s\n", name.c_str(),
               static_cast<int>(getpid()), devices.c_str(), flags.join.c_str());
  const Status status = connection.Run();
  agent->AbortAll("the node agent stopped");
  agent.reset();  // Before the connection it sends through, the data plane and the runtime.
  if (!status.ok()) return Fail(status);
  std::fprintf(stderr, "softwire node: %s: stopped\n",
               (*interrupts)->signal() == SIGINT ? "SIGINT" : "SIGTERM");
  return kExitSuccess;
}

}  // namespace cli
}  // namespace softwire
