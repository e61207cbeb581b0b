// An all-reduce of --bytes between two node processes, as the engine runs it (a ring of boxing,
// send and recv actors over the data plane), against PyTorch's gloo all_reduce between two
// processes and against the raw-TCP bound, measured in the same run (README.md beside this file).
//
// engine TCP / shm: the plan of bench/allreduce/ring_plan.h; this process hosts node1, a child
//   (this binary, --child) hosts node0; figure: seconds of this process's Execution::Run.
// gloo: gloo_all_reduce.py (beside this binary) with /usr/bin/python3; seconds of one
//   all_reduce on rank 0 after a barrier.
// raw TCP bound: the ring moves --bytes each way between the two processes (half in the
//   reduce-scatter, half in the all-gather), so a forked child and this process each write
//   --bytes to the other over one loopback connection at once (1 MiB writes); seconds until
//   this process has read them all. No all-reduce over that socket can be faster.
// Every figure is the median of --repeats, taken in turn (raw, engine TCP, gloo, engine shm).
//
//   all_reduce_bench                          # 64 MiB, 7 repeats
//   all_reduce_bench --bytes 16777216 --repeats 5
#include <glog/logging.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
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

// Both directions at once over one loopback connection: each side writes `bytes` in 1 MiB
// writes while reading the other's; a warm round, then a timed one. Seconds of the timed one.
constexpr int64_t kChunk = int64_t{1} << 20;

double RawExchangeSeconds(int64_t bytes) {
  StatusOr<runtime::net::Socket> listener = runtime::net::Socket::Listen("127.0.0.1:0");
  CHECK(listener.ok()) << listener.status();
  const std::string address = *listener->LocalAddress();
  const auto exchange = [bytes](runtime::net::Socket& socket, std::vector<char>& out,
                                std::vector<char>& in) {
    std::thread writer([&] {
      for (int64_t at = 0; at < bytes; at += kChunk) {
        CHECK(socket.SendAll(out.data() + at, std::min(kChunk, bytes - at)).ok());
      }
    });
    for (int64_t at = 0; at < bytes; at += kChunk) {
      CHECK(socket.ReceiveAll(in.data() + at, std::min(kChunk, bytes - at)).ok());
    }
    writer.join();
  };
  const pid_t peer = fork();
  if (peer == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    std::vector<char> out(static_cast<size_t>(bytes), 'x');
    std::vector<char> in(static_cast<size_t>(bytes), 0);
    StatusOr<runtime::net::Socket> socket =
        runtime::net::Socket::Connect(address, std::chrono::seconds(5));
    if (!socket.ok()) _exit(1);
    char go = 0;
    for (int round = 0; round < 2; ++round) {
      if (!socket->ReceiveAll(&go, 1).ok()) _exit(1);
      exchange(*socket, out, in);
    }
    _exit(0);
  }
  std::vector<char> out(static_cast<size_t>(bytes), 'y');
  std::vector<char> in(static_cast<size_t>(bytes), 0);
  StatusOr<runtime::net::Socket> socket = listener->Accept();
  CHECK(socket.ok()) << socket.status();
  double seconds = 0;
  for (int round = 0; round < 2; ++round) {
    const char go = 1;
    CHECK(socket->SendAll(&go, 1).ok());
    const Clock::time_point began = Clock::now();
    exchange(*socket, out, in);
    seconds = SecondsSince(began);
  }
  waitpid(peer, nullptr, 0);
  return seconds;
}

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
  int64_t bytes = int64_t{64} << 20;
  int64_t repeats = 7;
  int64_t shm_chunks = 8;
  bool trace = false;
  std::string python = "/usr/bin/python3";
  std::string gloo_script = BesideThisBinary("gloo_all_reduce.py");
  cli::FlagParser flags;
  flags.AddInt("bytes", &bytes, "B", "bytes of the all-reduced float32 tensor");
  flags.AddInt("repeats", &repeats, "N", "measurements per figure (median)");
  flags.AddInt("shm-chunks", &shm_chunks, "N", "cells of the same-host ring (1 MiB each)");
  flags.AddBool("trace", &trace, "print node1's firings of one more TCP run after the figures");
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
  const int sub_chunks = compiler::RingSubChunks(bytes / 2);
  const proto::Plan plan = RingAllReducePlan(bytes, sub_chunks);
  const std::string plan_file = "/tmp/all_reduce_bench." + std::to_string(getpid()) + ".plan";
  CHECK(WriteFileAtomically(plan_file, plan.SerializeAsString()).ok());
  std::printf("cpu: %s\n", CpuModel().c_str());
  std::printf(
      "all-reduce of %lld bytes (float32) between 2 processes; ring of %d chunks; %lld "
      "repeats, medians\n",
      static_cast<long long>(bytes), 2 * sub_chunks, static_cast<long long>(repeats));
  std::fflush(stdout);

  NodePair tcp(plan, plan_file, 0);
  NodePair shm(plan, plan_file, static_cast<int>(shm_chunks));
  tcp.RunOnce();  // Warm: connections, first touch of every register.
  shm.RunOnce();
  ProcessPipe gloo({python, gloo_script, std::to_string(bytes), std::to_string(FreePort())});
  CHECK_EQ(gloo.ReadLine(), "ready") << "the gloo baseline did not start (see its stderr)";

  std::vector<double> raw, engine_tcp, engine_shm, gloo_seconds;
  for (int r = 0; r < repeats; ++r) {
    raw.push_back(RawExchangeSeconds(bytes));
    engine_tcp.push_back(tcp.RunOnce());
    gloo.Send("run");
    gloo_seconds.push_back(std::stod(gloo.ReadLine()));
    engine_shm.push_back(shm.RunOnce());
  }
  std::remove(plan_file.c_str());

  const double mb = static_cast<double>(bytes) / 1e6;
  const auto row = [&](const char* name, double seconds) {
    std::printf("%-22s %8.1f ms %7.2f GB/s   %5.2fx gloo   %4.0f%% of raw-TCP bound\n", name,
                seconds * 1e3, mb / 1e3 / seconds, Median(gloo_seconds) / seconds,
                100.0 * Median(raw) / seconds);
  };
  std::printf("(GB/s: algorithm bandwidth, tensor bytes / seconds)\n");
  row("raw TCP bound", Median(raw));
  row("gloo (PyTorch)", Median(gloo_seconds));
  row("engine ring, TCP", Median(engine_tcp));
  row("engine ring, shm", Median(engine_shm));
  if (trace) {
    tcp.TraceNextRun();
    tcp.RunOnce();
  }
  return 0;
}

}  // namespace
}  // namespace bench
}  // namespace softwire

int main(int argc, char** argv) {
  return softwire::bench::Main(argc, argv);
}
