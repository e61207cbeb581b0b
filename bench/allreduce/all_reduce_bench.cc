// An all-reduce of --bytes between two node processes, as the engine runs it (a ring of boxing,
// send and recv actors over the data plane), against PyTorch's gloo all_reduce between two
// processes and against the raw-TCP bound, measured in the same run (README.md beside this file).
//
// engine TCP / shm: the plan of bench/allreduce/ring_plan.h; this process hosts node1, a child
//   (this binary, --child) hosts node0; figure: seconds of this process's Execution::Run.
// gloo: gloo_all_reduce.py (beside this binary) with /usr/bin/python3; seconds of one
//   all_reduce on rank 0 after a barrier.
// raw TCP bound: the ring moves --bytes each way between the two processes (half in the
//   reduce-scatter, half in the all-gather), so a child (this binary, --raw-peer) and this
//   process each write --bytes to the other at once, each direction over a loopback connection
//   of its own as the data plane's are (1 MiB writes); seconds until this process has read them
//   all. No all-reduce over that socket can be faster. Children are started with posix_spawn, never
//   fork (node_process.h says why).
// Every figure is the median of --repeats, taken in turn (raw, engine TCP, gloo, engine shm).
//
//   all_reduce_bench                          # 64 MiB, 7 repeats
//   all_reduce_bench --bytes 16777216 --repeats 5
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/file.h"
#include "bench/allreduce/node_process.h"
#include "bench/allreduce/ring_plan.h"
#include "cli/flag_parser.h"
#include "compiler/physical/boxing_builder.h"
#include "runtime/net/socket.h"

namespace softwire {
namespace bench {
namespace {

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double SecondsSince(Clock::time_point began) {
  return std::chrono::duration<double>(Clock::now() - began).count();
}

constexpr int64_t kChunk = int64_t{1} << 20;

// Both directions at once, each over a connection of its own (as the data plane has one
// outbound connection per peer): writes `bytes` from `out` to `outbound` in 1 MiB writes on a
// thread of its own while reading the other side's from `inbound` into `in`.
void Exchange(runtime::net::Socket& outbound, runtime::net::Socket& inbound, int64_t bytes,
              const std::vector<char>& out, std::vector<char>& in) {
  std::thread writer([&] {
    for (int64_t at = 0; at < bytes; at += kChunk) {
      CHECK(outbound.SendAll(out.data() + at, std::min(kChunk, bytes - at)).ok());
    }
  });
  for (int64_t at = 0; at < bytes; at += kChunk) {
    CHECK(inbound.ReceiveAll(in.data() + at, std::min(kChunk, bytes - at)).ok());
  }
  writer.join();
}

// The raw-TCP peer (this binary, --raw-peer ADDRESS BYTES): opens two connections (the first
// carries this process's bytes and the go bytes, the second the peer's), then exchanges `bytes`
// each way per go byte it reads, until the connection ends.
int RunRawPeer(const std::string& address, int64_t bytes) {
  DieWithParent();
  std::vector<char> out(static_cast<size_t>(bytes), 'x');
  std::vector<char> in(static_cast<size_t>(bytes), 0);
  StatusOr<runtime::net::Socket> inbound =
      runtime::net::Socket::Connect(address, std::chrono::seconds(5));
  CHECK(inbound.ok()) << inbound.status();
  StatusOr<runtime::net::Socket> outbound =
      runtime::net::Socket::Connect(address, std::chrono::seconds(5));
  CHECK(outbound.ok()) << outbound.status();
  char go = 0;
  while (inbound->ReceiveAll(&go, 1).ok()) Exchange(*outbound, *inbound, bytes, out, in);
  return 0;
}

// This process's side of the raw-TCP bound: two connections to a --raw-peer child, warmed once.
class RawExchange {
 public:
  explicit RawExchange(int64_t bytes)
      : bytes_(bytes), out_(static_cast<size_t>(bytes), 'y'), in_(static_cast<size_t>(bytes), 0) {
    StatusOr<runtime::net::Socket> listener = runtime::net::Socket::Listen("127.0.0.1:0");
    CHECK(listener.ok()) << listener.status();
    peer_ = std::make_unique<ProcessPipe>(std::vector<std::string>{
        SelfPath(), "--raw-peer", *listener->LocalAddress(), std::to_string(bytes)});
    for (std::unique_ptr<runtime::net::Socket>* socket : {&outbound_, &inbound_}) {
      StatusOr<runtime::net::Socket> accepted = listener->Accept();
      CHECK(accepted.ok()) << accepted.status();
      *socket = std::make_unique<runtime::net::Socket>(std::move(accepted).value());
    }
    Seconds();  // Warm: window and buffer growth, first touch of the buffers.
  }
  ~RawExchange() {
    outbound_.reset();  // The peer's read ends, and so does the peer.
    inbound_.reset();
    peer_.reset();
  }
  // Seconds of one exchange of `bytes` each way.
  double Seconds() {
    const char go = 1;
    CHECK(outbound_->SendAll(&go, 1).ok());
    const Clock::time_point began = Clock::now();
    Exchange(*outbound_, *inbound_, bytes_, out_, in_);
    return SecondsSince(began);
  }

 private:
  const int64_t bytes_;
  std::vector<char> out_;
  std::vector<char> in_;
  std::unique_ptr<ProcessPipe> peer_;
  std::unique_ptr<runtime::net::Socket> outbound_;  // This process's bytes and the go bytes.
  std::unique_ptr<runtime::net::Socket> inbound_;   // The peer's bytes.
};

// A free loopback port for gloo's rendezvous (released just before gloo binds it).
int FreePort() {
  StatusOr<runtime::net::Socket> listener = runtime::net::Socket::Listen("127.0.0.1:0");
  CHECK(listener.ok()) << listener.status();
  const std::string address = *listener->LocalAddress();
  return std::stoi(address.substr(address.rfind(':') + 1));
}

std::string BesideThisBinary(const std::string& name) {
  char path[4096] = {};
  const ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  CHECK_GT(length, 0);
  std::string self(path, static_cast<size_t>(length));
  return self.substr(0, self.rfind('/') + 1) + name;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 4 && args[0] == "--child") {
    return RunNodeChild(args[1], args[2], std::stoi(args[3]));
  }
  if (args.size() == 3 && args[0] == "--raw-peer") return RunRawPeer(args[1], std::stoll(args[2]));
  int64_t bytes = int64_t{64} << 20;
  int64_t repeats = 7;
  int64_t shm_chunks = 8;
  bool trace = false;
  bool no_views = false;
  int64_t sub_chunks_flag = 0;
  std::string python = "/usr/bin/python3";
  std::string gloo_script = BesideThisBinary("gloo_all_reduce.py");
  cli::FlagParser flags;
  flags.AddInt("bytes", &bytes, "B", "bytes of the all-reduced float32 tensor");
  flags.AddInt("repeats", &repeats, "N", "measurements per figure (median)");
  flags.AddInt("shm-chunks", &shm_chunks, "N", "cells of the same-host ring (1 MiB each)");
  flags.AddBool("trace", &trace, "print node1's firings of one more TCP run after the figures");
  flags.AddInt("sub-chunks", &sub_chunks_flag, "N",
               "sub-chunks per member (default: the compiler's RingSubChunks; more: a deeper "
               "pipeline of smaller steps)");
  flags.AddBool("no-views", &no_views,
                "split the gradient into chunk registers first (a copy, as `--no-views` "
                "compiles it) instead of reading each chunk as a range of it");
  flags.AddString("python", &python, "PATH", "python with torch, for the gloo baseline");
  flags.AddString("gloo-script", &gloo_script, "PATH", "the gloo baseline script");
  std::vector<std::string> positional;
  Status parsed = flags.Parse(args, &positional);
  if (!parsed.ok() || bytes < 64 || repeats < 1) {
    std::cerr << (parsed.ok() ? InvalidArgumentError("--bytes >= 64, --repeats >= 1") : parsed)
              << "\n"
              << flags.Help();
    return 2;
  }
  const int sub_chunks =
      sub_chunks_flag > 0 ? static_cast<int>(sub_chunks_flag) : compiler::RingSubChunks(bytes / 2);
  const proto::Plan plan = RingAllReducePlan(bytes, sub_chunks, /*range_views=*/!no_views);
  const std::string plan_file = "/tmp/all_reduce_bench." + std::to_string(getpid()) + ".plan";
  CHECK(WriteFileAtomically(plan_file, plan.SerializeAsString()).ok());
  std::printf("cpu: %s\n", CpuModel().c_str());
  std::printf(
      "all-reduce of %lld bytes (float32) between 2 processes; ring of %d chunks (%s); %lld "
      "repeats, medians\n",
      static_cast<long long>(bytes), 2 * sub_chunks,
      no_views ? "split into copies" : "read as ranges", static_cast<long long>(repeats));
  std::fflush(stdout);

  RawExchange raw_tcp(bytes);
  NodePair tcp(plan, plan_file, 0);
  NodePair shm(plan, plan_file, static_cast<int>(shm_chunks));
  tcp.RunOnce();  // Warm: connections, first touch of every register.
  shm.RunOnce();
  ProcessPipe gloo({python, gloo_script, std::to_string(bytes), std::to_string(FreePort())});
  CHECK_EQ(gloo.ReadLine(), "ready") << "the gloo baseline did not start (see its stderr)";

  std::vector<double> raw, engine_tcp, engine_shm, gloo_seconds;
  for (int r = 0; r < repeats; ++r) {
    raw.push_back(raw_tcp.Seconds());
    engine_tcp.push_back(tcp.RunOnce());
    gloo.Send("run");
    gloo_seconds.push_back(std::stod(gloo.ReadLine()));
    engine_shm.push_back(shm.RunOnce());
  }
  std::remove(plan_file.c_str());

  const double mb = static_cast<double>(bytes) / 1e6;
  const auto row = [&](const char* name, const std::vector<double>& samples) {
    const double seconds = Median(samples);
    std::printf("%-18s %7.1f ms %6.2f GB/s  %5.2fx gloo  %4.0f%% of bound   (%.1f..%.1f ms)\n",
                name, seconds * 1e3, mb / 1e3 / seconds, Median(gloo_seconds) / seconds,
                100.0 * Median(raw) / seconds,
                *std::min_element(samples.begin(), samples.end()) * 1e3,
                *std::max_element(samples.begin(), samples.end()) * 1e3);
  };
  std::printf(
      "(GB/s: algorithm bandwidth, tensor bytes / seconds; in brackets fastest..slowest)\n");
  row("raw TCP bound", raw);
  row("gloo (PyTorch)", gloo_seconds);
  row("engine ring, TCP", engine_tcp);
  row("engine ring, shm", engine_shm);
  // Each repeat measured all four back to back: its own ratios see one load.
  std::vector<double> tcp_vs_gloo, shm_vs_gloo, tcp_vs_bound;
  for (size_t r = 0; r < raw.size(); ++r) {
    tcp_vs_gloo.push_back(gloo_seconds[r] / engine_tcp[r]);
    shm_vs_gloo.push_back(gloo_seconds[r] / engine_shm[r]);
    tcp_vs_bound.push_back(raw[r] / engine_tcp[r]);
  }
  std::printf(
      "per repeat, median: engine TCP %.2fx gloo and %.0f%% of the bound; engine shm "
      "%.2fx gloo\n",
      Median(tcp_vs_gloo), 100.0 * Median(tcp_vs_bound), Median(shm_vs_gloo));
  if (trace) {
    tcp.TraceNextRun();
    const double seconds = tcp.RunOnce();
    std::printf("(that run: %.1f ms in Execution::Run)\n", seconds * 1e3);
  }
  return 0;
}

}  // namespace
}  // namespace bench
}  // namespace softwire

int main(int argc, char** argv) {
  return softwire::bench::Main(argc, argv);
}
