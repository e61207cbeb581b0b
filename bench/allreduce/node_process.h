// Two node processes hosting the two shares of a two-node plan, joined by their data planes,
// for all_reduce_bench (README.md beside this file).
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

#include "bench/common/child_process.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace bench {

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
