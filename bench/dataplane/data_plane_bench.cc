// Bytes between two node processes over the TCP data plane, as a share of raw loopback TCP
// measured in the same run (README.md beside this file).
//
// data plane: a two-node plan, source (node0) -> send -> wire register (node1) -> recv -> sink,
//   one tensor of --size bytes per piece, the wire register with the compiler's 2 slots. This
//   process hosts node1 (the receiver); a child process (this binary, --child) hosts node0.
//   Figure: bytes per second of one run of --bytes in total, from Run's start to its end on the
//   receiver, actors, protocol messages and releases included. The recv's kernel is a no-op, so
//   the figure is the transport's, not the receiving device's memcpy.
// raw TCP: a child (this binary, --raw-writer) writes --bytes in --size writes to a plain
//   loopback socket, this process reads them into one --size buffer. The same sizes, the same
//   repeats, the same machine. Children start with posix_spawn, never fork
//   (bench/common/child_process.h says why).
// Each figure is the median of --repeats; the CPU model is printed first.
//
//   data_plane_bench                                   # 64 KiB .. 64 MiB, 256 MiB each, 5 repeats
//   data_plane_bench --sizes 1048576 --bytes 1073741824 --repeats 7
#include <glog/logging.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "base/file.h"
#include "bench/common/child_process.h"
#include "bench/dataplane/fill_timeline.h"
#include "cli/flag_parser.h"
#include "runtime/host/execution.h"
#include "runtime/host/hosted_plan.h"
#include "runtime/host/node_runtime.h"
#include "runtime/host/test_plans.h"
#include "runtime/net/data_plane.h"
#include "runtime/net/socket.h"
#include "trace/trace_model.h"

namespace softwire {
namespace bench {
namespace {

using Clock = std::chrono::steady_clock;
using runtime::testing::TestActorSpec;
constexpr actors::JobId kJob = 1;

// CPU seconds (user + system) and context switches (a thread that slept and was woken, or was
// preempted) of this whole process so far.
struct ProcessUsage {
  double cpu_seconds = 0;
  int64_t switches = 0;
};

// `who`: RUSAGE_SELF (every thread) or RUSAGE_THREAD (the calling thread).
ProcessUsage UsageNow(int who = RUSAGE_SELF) {
  rusage usage{};
  getrusage(who, &usage);
  const auto seconds = [](const timeval& time) { return time.tv_sec + time.tv_usec / 1e6; };
  return {seconds(usage.ru_utime) + seconds(usage.ru_stime),
          static_cast<int64_t>(usage.ru_nvcsw + usage.ru_nivcsw)};
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// source -> send -> wire (node1) -> recv -> sink, `pieces` pieces of `bytes` each; the send
// with `send_in_flight` firings in flight (the compiler gives it the wire register's slots).
proto::Plan TransferPlan(int64_t bytes, int64_t pieces, int wire_slots, int send_in_flight) {
  const int64_t floats = std::max<int64_t>(1, bytes / 4);
  runtime::testing::TestPlan builder(/*steps=*/1, pieces);
  // The recv's output is a scalar: its kernel is a no-op and the sink reports scalars.
  builder.Register("x", wire_slots, {floats})
      .Register("wire", wire_slots, {floats})
      .Register("y", 1);
  builder.Actor(TestActorSpec("source", proto::ACTOR_KIND_SOURCE, "noop", {}, {"x"}));
  builder.Actor(
      TestActorSpec("send:x", proto::ACTOR_KIND_SEND, "copy", {"x"}, {"wire"}).OnQueue(1));
  builder.Actor(
      TestActorSpec("recv:x", proto::ACTOR_KIND_RECV, "noop", {"wire"}, {"y"}).OnDevice(1));
  builder.Actor(TestActorSpec("sink", proto::ACTOR_KIND_SINK, "noop", {"y"}, {}).OnDevice(1));
  proto::Plan plan = builder.Build();
  runtime::testing::PlaceWireOnReceiver(&plan, /*wire=*/1, "node1");
  plan.mutable_actor(1)->set_max_in_flight(send_in_flight);
  return plan;
}

std::unique_ptr<runtime::NodeRuntime> RuntimeFor(const proto::Plan& plan, const std::string& node,
                                                 const runtime::KernelRegistry* kernels) {
  runtime::NodeRuntimeOptions options;
  options.kernels.cpu = kernels;
  // As `softwire node` runs (docs/DECISIONS.md 37); DATA_PLANE_BENCH_TRANSFER_WORKER=0 (both
  // processes inherit it) runs each node on one worker, as before, to compare.
  const char* transfer_worker = std::getenv("DATA_PLANE_BENCH_TRANSFER_WORKER");
  options.caf.transfer_worker = transfer_worker == nullptr || std::atoi(transfer_worker) != 0;
  if (const char* spin = std::getenv("DATA_PLANE_BENCH_WORKER_SPIN_US")) {
    options.caf.worker_spin_us = std::atoi(spin);
  }
  for (const proto::PlanDevice& device : plan.device()) {
    if (device.node() != node) continue;
    runtime::DeviceSpec spec;
    spec.device = device;
    options.devices.push_back(spec);
  }
  StatusOr<std::unique_ptr<runtime::NodeRuntime>> created =
      runtime::NodeRuntime::Create(std::move(options));
  CHECK(created.ok()) << created.status();
  return std::move(created).value();
}

// Hosts one node's share and runs it once per "run" line on stdin, attached to `peers`;
// prints "attached" before waiting for each "run" and "done" after it.
class ShareRunner {
 public:
  ShareRunner(const proto::Plan& plan, const std::string& node, runtime::net::DataPlane* plane)
      : plan_(plan), plane_(plane) {
    runtime::testing::RegisterTestKernels(&kernels_, nullptr);
    runtime_ = RuntimeFor(plan_, node, &kernels_);
    StatusOr<std::unique_ptr<runtime::HostedPlan>> hosted =
        runtime::HostedPlan::Load(runtime_.get(), plan_, node, kJob);
    CHECK(hosted.ok()) << hosted.status();
    hosted_ = std::move(hosted).value();
    CHECK(hosted_->Bind({}).ok());
  }
  ~ShareRunner() {
    hosted_.reset();
    runtime_.reset();
  }
  // Attaches a new run; call Run after every process attached. `trace`: record its firings.
  void Attach(const std::map<std::string, std::string>& peers, bool trace = false) {
    runtime::ExecutionOptions options;
    options.stall_timeout = std::chrono::seconds(30);
    options.trace.enabled = trace;
    StatusOr<std::unique_ptr<runtime::Execution>> run =
        runtime::Execution::Create(runtime_.get(), hosted_.get(), options);
    CHECK(run.ok()) << run.status();
    run_ = std::move(run).value();
    StatusOr<std::unique_ptr<runtime::net::DataPlaneAttachment>> attached =
        plane_->Attach(hosted_.get(), run_.get(), peers);
    CHECK(attached.ok()) << attached.status();
    attached_ = std::move(attached).value();
  }
  // Seconds the run took.
  double Run() {
    const Clock::time_point began = Clock::now();
    const ProcessUsage usage_began = UsageNow();
    Status status = run_->Run();
    const double seconds = std::chrono::duration<double>(Clock::now() - began).count();
    const ProcessUsage usage_ended = UsageNow();
    cpu_seconds_ = usage_ended.cpu_seconds - usage_began.cpu_seconds;
    switches_ = usage_ended.switches - usage_began.switches;
    CHECK(status.ok()) << status;
    std::optional<trace::TraceLog> log = run_->TakeTrace();
    events_ = log ? log->events : std::vector<trace::TraceEvent>{};
    attached_.reset();
    run_.reset();
    return seconds;
  }
  // The firings of the last run, if it was traced.
  const std::vector<trace::TraceEvent>& events() const { return events_; }
  // User and system CPU seconds of this whole process (every thread) during the last run.
  double cpu_seconds() const { return cpu_seconds_; }
  // Context switches of this process's threads during the last run.
  int64_t switches() const { return switches_; }

 private:
  const proto::Plan& plan_;
  runtime::net::DataPlane* plane_;
  runtime::KernelRegistry kernels_;
  std::unique_ptr<runtime::NodeRuntime> runtime_;
  std::unique_ptr<runtime::HostedPlan> hosted_;
  std::unique_ptr<runtime::Execution> run_;
  std::unique_ptr<runtime::net::DataPlaneAttachment> attached_;
  std::vector<trace::TraceEvent> events_;
  double cpu_seconds_ = 0;
  int64_t switches_ = 0;
};

// The child: hosts node0 of the plan in `plan_file`, with node1 at `peer`.
int RunChild(const std::string& plan_file, const std::string& peer, int shm_chunks) {
  DieWithParent();
  StatusOr<std::string> bytes = ReadFile(plan_file);
  CHECK(bytes.ok()) << bytes.status();
  proto::Plan plan;
  CHECK(plan.ParseFromString(*bytes));
  runtime::net::DataPlaneOptions options;
  options.shared_memory_chunks = shm_chunks;
  StatusOr<std::unique_ptr<runtime::net::DataPlane>> plane =
      runtime::net::DataPlane::Create(nullptr, options);
  CHECK(plane.ok()) << plane.status();
  ShareRunner share(plan, "node0", plane->get());
  std::cout << "address " << (*plane)->address() << std::endl;
  std::string line;
  while (std::getline(std::cin, line) && (line == "attach" || line == "attach traced")) {
    const bool traced = line == "attach traced";
    share.Attach({{"node1", peer}}, traced);
    std::cout << "attached" << std::endl;
    if (!std::getline(std::cin, line) || line != "run") break;
    share.Run();
    if (!traced) continue;
    std::cout << "cpu " << share.cpu_seconds() << " " << share.switches() << "\n";
    std::cout << "firings " << share.events().size() << "\n";
    for (const trace::TraceEvent& event : share.events()) std::cout << FiringLine(event) << "\n";
    std::cout << std::flush;
  }
  return 0;
}

// The raw-TCP writer (this binary, --raw-writer ADDRESS SIZE TOTAL): connects and writes
// 2 x TOTAL bytes in SIZE tensors, each in the data plane's chunks (1 MiB; smaller tensors
// whole), which loopback moves faster than one call per large tensor: the best this plain
// socket does. Twice: the first round warms the connection (window and buffer growth), as the
// data plane's connection is warm after its first run; the reader times the second. Then
// prints "cpu SECONDS": its CPU (user + system) in the second round.
int RunRawWriter(const std::string& address, int64_t size, int64_t total) {
  DieWithParent();
  std::vector<char> data(static_cast<size_t>(size), 'x');
  StatusOr<runtime::net::Socket> socket =
      runtime::net::Socket::Connect(address, std::chrono::seconds(5));
  CHECK(socket.ok()) << socket.status();
  const int64_t chunk = std::min<int64_t>(size, int64_t{1} << 20);
  ProcessUsage timed_began;
  for (int64_t sent = 0; sent < 2 * total; sent += size) {
    if (sent == total) timed_began = UsageNow();
    for (int64_t at = 0; at < size; at += chunk) {
      CHECK(socket->SendAll(data.data() + at, std::min(chunk, size - at)).ok());
    }
  }
  std::cout << "cpu " << UsageNow().cpu_seconds - timed_began.cpu_seconds << std::endl;
  return 0;
}

// One measurement of a baseline: bytes per second, and for raw TCP the CPU per tensor of its
// writer and reader (0 for memcpy).
struct Baseline {
  double rate = 0;
  double writer_cpu_us = 0;
  double reader_cpu_us = 0;
};

// Bytes per second over a plain loopback socket: a --raw-writer child writes, this process
// reads into one buffer.
Baseline RawTcpRate(int64_t size, int64_t total) {
  std::vector<char> buffer(static_cast<size_t>(size), 0);  // Touched: no page faults timed.
  StatusOr<runtime::net::Socket> listener = runtime::net::Socket::Listen("127.0.0.1:0");
  CHECK(listener.ok()) << listener.status();
  ProcessPipe writer({SelfPath(), "--raw-writer", *listener->LocalAddress(), std::to_string(size),
                      std::to_string(total)});
  StatusOr<runtime::net::Socket> socket = listener->Accept();
  CHECK(socket.ok()) << socket.status();
  for (int64_t got = 0; got < total; got += size) {
    CHECK(socket->ReceiveAll(buffer.data(), size).ok());
  }
  const Clock::time_point began = Clock::now();
  const ProcessUsage reader_began = UsageNow(RUSAGE_THREAD);
  for (int64_t got = 0; got < total; got += size) {
    CHECK(socket->ReceiveAll(buffer.data(), size).ok());
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - began).count();
  const double reader_cpu = UsageNow(RUSAGE_THREAD).cpu_seconds - reader_began.cpu_seconds;
  const std::string writer_cpu = writer.ReadLine();
  CHECK_EQ(writer_cpu.rfind("cpu ", 0), 0u) << writer_cpu;
  const double tensors = static_cast<double>(total / size);
  return {static_cast<double>(total) / seconds, std::stod(writer_cpu.substr(4)) * 1e6 / tensors,
          reader_cpu * 1e6 / tensors};
}

// Bytes per second of memcpy of `size` bytes at a time over `total` bytes, between buffers
// alternating as the transfer's slots do: what the same-host path is measured against.
Baseline MemcpyRate(int64_t size, int64_t total) {
  // Two source and two destination buffers, as the transfer's 2-slot registers have.
  std::vector<std::vector<char>> from(2, std::vector<char>(static_cast<size_t>(size), 'x'));
  std::vector<std::vector<char>> to(2, std::vector<char>(static_cast<size_t>(size), 0));
  const Clock::time_point began = Clock::now();
  int64_t copies = 0;
  for (int64_t done = 0; done < total; done += size, ++copies) {
    std::memcpy(to[copies % 2].data(), from[copies % 2].data(), static_cast<size_t>(size));
    from[copies % 2][static_cast<size_t>(copies) % from[0].size()] ^= 1;  // Kept.
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - began).count();
  return {static_cast<double>(total) / seconds};
}

int32_t ActorId(const proto::Plan& plan, const std::string& name) {
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.name() == name) return static_cast<int32_t>(actor.id());
  }
  LOG(FATAL) << "no actor " << name;
  return -1;
}

struct Rates {
  double baseline = 0;
  double plane = 0;
  // Medians of the baselines' CPU per tensor (raw TCP's writer and reader; 0 for memcpy).
  double baseline_writer_cpu_us = 0;
  double baseline_reader_cpu_us = 0;
  std::string timeline;  // Of one more, traced run (--trace); empty otherwise.
};

// Bytes per second of `repeats` runs moving `total` bytes in pieces of `size` (median), each
// right after a measurement of `baseline` over the same bytes (so both see the same load).
// `shm_chunks`: both data planes' shared_memory_chunks (0: over TCP).
Rates MeasureRates(int64_t size, int64_t total, int repeats, int wire_slots, int send_in_flight,
                   int shm_chunks, bool traced, const std::string& plan_file,
                   const std::function<Baseline(int64_t size, int64_t total)>& baseline) {
  const int64_t pieces = std::max<int64_t>(8, total / size);
  const proto::Plan plan = TransferPlan(size, pieces, wire_slots, send_in_flight);
  CHECK(WriteFileAtomically(plan_file, plan.SerializeAsString()).ok());
  runtime::net::DataPlaneOptions options;
  options.shared_memory_chunks = shm_chunks;
  StatusOr<std::unique_ptr<runtime::net::DataPlane>> plane =
      runtime::net::DataPlane::Create(nullptr, options);
  CHECK(plane.ok()) << plane.status();
  std::vector<double> rates;
  std::vector<double> baselines;
  std::vector<double> writer_cpu;
  std::vector<double> reader_cpu;
  std::string timeline;
  {
    ShareRunner share(plan, "node1", plane->get());
    ProcessPipe child(
        {SelfPath(), "--child", plan_file, (*plane)->address(), std::to_string(shm_chunks)});
    const std::string address = child.ReadLine().substr(8);
    for (int r = 0; r < repeats; ++r) {
      const Baseline measured = baseline(size, pieces * size);
      baselines.push_back(measured.rate);
      writer_cpu.push_back(measured.writer_cpu_us);
      reader_cpu.push_back(measured.reader_cpu_us);
      child.Send("attach");
      CHECK_EQ(child.ReadLine(), "attached");
      share.Attach({{"node0", address}});
      child.Send("run");
      const double seconds = share.Run();
      rates.push_back(static_cast<double>(pieces * size) / seconds);
    }
    if (traced) {  // One more run, both processes tracing their firings.
      child.Send("attach traced");
      CHECK_EQ(child.ReadLine(), "attached");
      share.Attach({{"node0", address}}, /*trace=*/true);
      child.Send("run");
      const double traced_seconds = share.Run();
      const std::string cpu = child.ReadLine();
      CHECK_EQ(cpu.rfind("cpu ", 0), 0u) << cpu;
      const std::string count = child.ReadLine();
      CHECK_EQ(count.rfind("firings ", 0), 0u) << count;
      std::vector<trace::TraceEvent> sender;
      for (int64_t n = std::stoll(count.substr(8)); n > 0; --n) {
        sender.push_back(ParseFiringLine(child.ReadLine()));
      }
      FillTimeline fills =
          AnalyseFills(sender, share.events(), ActorId(plan, "send:x"), ActorId(plan, "recv:x"));
      std::istringstream usage(cpu.substr(4));
      double sender_cpu = 0;
      int64_t sender_switches = 0;
      usage >> sender_cpu >> sender_switches;
      const double fill_count = static_cast<double>(pieces);
      fills.sender_cpu_us = sender_cpu * 1e6 / fill_count;
      fills.receiver_cpu_us = share.cpu_seconds() * 1e6 / fill_count;
      fills.sender_switches = static_cast<double>(sender_switches) / fill_count;
      fills.receiver_switches = static_cast<double>(share.switches()) / fill_count;
      char rate[64];
      std::snprintf(rate, sizeof(rate), "; this traced run %.2f GB/s",
                    static_cast<double>(pieces * size) / traced_seconds / 1e9);
      timeline = Describe(fills) + rate;
    }
  }
  return Rates{Median(baselines), Median(rates), Median(writer_cpu), Median(reader_cpu), timeline};
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 4 && args[0] == "--child") {
    return RunChild(args[1], args[2], std::stoi(args[3]));
  }
  if (args.size() == 4 && args[0] == "--raw-writer") {
    return RunRawWriter(args[1], std::stoll(args[2]), std::stoll(args[3]));
  }
  std::string sizes_text = "65536,1048576,16777216,67108864";
  int64_t total = int64_t{256} << 20;
  int64_t repeats = 5;
  int64_t wire_slots = 0;
  int64_t shm_chunks = 8;
  bool traced = false;
  int64_t send_in_flight = 0;
  cli::FlagParser flags;
  flags.AddInt("send-in-flight", &send_in_flight, "N",
               "the send's firings in flight (default: the wire slots, as the compiler gives; "
               "1: one fill at a time)");
  flags.AddBool("trace", &traced,
                "after each figure, one more traced run: where its fills' time went");
  flags.AddInt("shm-chunks", &shm_chunks, "N", "cells of the same-host ring (1 MiB each)");
  flags.AddInt(
      "wire-slots", &wire_slots, "N",
      "slots of the wire register (default: as plan_registers gives, about 4 MiB, 2 to 8)");
  flags.AddString("sizes", &sizes_text, "B,B,...", "tensor sizes in bytes");
  flags.AddInt("bytes", &total, "B", "bytes moved per measurement (at least 8 tensors)");
  flags.AddInt("repeats", &repeats, "N", "measurements per figure (median)");
  std::vector<std::string> positional;
  Status parsed = flags.Parse(args, &positional);
  if (!parsed.ok()) {
    std::cerr << parsed << "\n" << flags.Help();
    return 2;
  }
  std::vector<int64_t> sizes;
  std::stringstream list(sizes_text);
  for (std::string item; std::getline(list, item, ',');) sizes.push_back(std::stoll(item));
  const std::string plan_file = "/tmp/data_plane_bench." + std::to_string(getpid()) + ".plan";
  std::printf("cpu: %s\n", CpuModel().c_str());
  std::printf("%-10s %9s %9s %6s   %9s %9s %6s   (GB/s)\n", "size", "raw TCP", "plane TCP", "share",
              "memcpy", "plane shm", "share");
  for (int64_t size : sizes) {
    const int64_t bytes = std::max(total, 8 * size);
    const int slots =
        wire_slots > 0
            ? static_cast<int>(wire_slots)
            : static_cast<int>(std::clamp<int64_t>(((int64_t{4} << 20) + size - 1) / size, 2, 8));
    const int in_flight = send_in_flight > 0 ? static_cast<int>(send_in_flight) : slots;
    const Rates tcp = MeasureRates(size, bytes, static_cast<int>(repeats), slots, in_flight, 0,
                                   traced, plan_file, RawTcpRate);
    const Rates shm = MeasureRates(size, bytes, static_cast<int>(repeats), slots, in_flight,
                                   static_cast<int>(shm_chunks), traced, plan_file, MemcpyRate);
    std::printf("%-10lld %9.2f %9.2f %5.0f%%   %9.2f %9.2f %5.0f%%\n", static_cast<long long>(size),
                tcp.baseline / 1e9, tcp.plane / 1e9, 100.0 * tcp.plane / tcp.baseline,
                shm.baseline / 1e9, shm.plane / 1e9, 100.0 * shm.plane / shm.baseline);
    if (traced) {
      std::printf("  TCP: %s\n  shm: %s\n", tcp.timeline.c_str(), shm.timeline.c_str());
      std::printf(
          "  raw TCP per tensor (median of the repeats): cpu writer %.1f us, reader %.1f us\n",
          tcp.baseline_writer_cpu_us, tcp.baseline_reader_cpu_us);
    }
    std::fflush(stdout);
  }
  std::remove(plan_file.c_str());
  return 0;
}

}  // namespace
}  // namespace bench
}  // namespace softwire

int main(int argc, char** argv) {
  return softwire::bench::Main(argc, argv);
}
