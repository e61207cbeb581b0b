// Two node processes hosting the two shares of a two-node plan, joined by their data planes,
// for all_reduce_bench (README.md beside this file); and a child process with pipes.
//
// NodePair hosts node1 in this process and starts this binary with
// `--child PLAN_FILE PEER_ADDRESS SHM_CHUNKS` to host node0 (RunNodeChild). RunOnce runs the plan
// once on both and returns this process's Execution::Run seconds. Not thread-safe; the child
// is killed when the pair is destroyed. CHECK-fails on any error (a benchmark).
#ifndef SOFTWIRE_BENCH_ALLREDUCE_NODE_PROCESS_H_
#define SOFTWIRE_BENCH_ALLREDUCE_NODE_PROCESS_H_

#include <sys/types.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "proto/plan.pb.h"

namespace softwire {
namespace bench {

// The CPU model of /proc/cpuinfo.
std::string CpuModel();

// A child process (argv[0] the program's path) with pipes to its stdin and stdout.
// Started with posix_spawn (no copy-on-write of this process's pages). When destroyed its stdin
// is closed and it is reaped, killed (SIGKILL) after 10 s if it has not ended; a child of this
// binary asks to die with this process (DieWithParent).
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

// For a child of this binary: SIGKILL when the parent ends.
void DieWithParent();

// The child's side: hosts node0 of the plan in `plan_file` with node1 at `peer`, prints its
// address, then per "attach" line attaches a run and prints "attached", per "run" runs it.
int RunNodeChild(const std::string& plan_file, const std::string& peer, int shm_chunks);

class NodePair {
 public:
  // `plan_file` holds `plan` serialized; `shm_chunks` 0 sends every byte over TCP.
  NodePair(const proto::Plan& plan, const std::string& plan_file, int shm_chunks);
  ~NodePair();
  double RunOnce();
  // The next RunOnce traces this process's actors and prints their firings.
  void TraceNextRun();

  class Share;  // One node's share, hosted and attached per run (also the child's).

 private:
  std::unique_ptr<Share> share_;
  std::unique_ptr<ProcessPipe> child_;
  std::string child_address_;
};

}  // namespace bench
}  // namespace softwire

#endif  // SOFTWIRE_BENCH_ALLREDUCE_NODE_PROCESS_H_
