// Child processes for the benchmarks that run peers in processes of their own (a node, a raw
// TCP writer, a gloo rank): started with posix_spawn and talked to over pipes.
//
//   ProcessPipe child({SelfPath(), "--child", plan_file});
//   child.Send("run");
//   std::string reply = child.ReadLine();
//
// posix_spawn, never fork: a fork write-protects every page of the benchmark's process
// (copy-on-write) until each is written again, which charges the runs after it a page fault
// per register page; glibc's posix_spawn shares the address space until the exec.
// CHECK-fails on any error (these are benchmarks).
#ifndef SOFTWIRE_BENCH_COMMON_CHILD_PROCESS_H_
#define SOFTWIRE_BENCH_COMMON_CHILD_PROCESS_H_

#include <sys/types.h>

#include <cstdio>
#include <string>
#include <vector>

namespace softwire {
namespace bench {

// The CPU model as /proc/cpuinfo names it, printed beside every figure.
std::string CpuModel();

// This executable's path (/proc/self/exe), to start it again as a child.
std::string SelfPath();

// For a child of a benchmark: SIGKILL when the parent ends (and exit now if it already has).
void DieWithParent();

// A child process (argv[0] the program's path) with pipes to its stdin and stdout. When
// destroyed its stdin is closed and it is reaped, killed (SIGKILL) after 10 s if it has not
// ended by then. Not thread-safe.
class ProcessPipe {
 public:
  explicit ProcessPipe(std::vector<std::string> argv);
  ~ProcessPipe();
  ProcessPipe(const ProcessPipe&) = delete;
  ProcessPipe& operator=(const ProcessPipe&) = delete;
  void Send(const std::string& line);
  // The next line of its stdout, without the newline; CHECK-fails when it ended.
  std::string ReadLine();

 private:
  pid_t pid_ = -1;
  FILE* in_ = nullptr;
  FILE* out_ = nullptr;
};

}  // namespace bench
}  // namespace softwire

#endif  // SOFTWIRE_BENCH_COMMON_CHILD_PROCESS_H_
