// The plan of one ring all-reduce between two nodes, as the compiler builds it for a gradient
// (compiler/physical/boxing_builder.cc, AllReduce) after insert_send_recv has turned every copy
// across nodes into a send, a wire register on the receiving device and a recv
// (docs/DATA_PLANE.md). Used by all_reduce_bench (README.md beside this file).
//
//   member m (node m, cpu:0): source -> x@m, read by the ring as chunks c0..c{2s-1}: byte
//                             ranges of x (range views), or split@m's copies (without)
//   chunk q, owner o = q / s, other p: send(x.c_q@p) => wire => recv -> add(., x.c_q@o) on o,
//                                      then send(sum@o) => wire => recv on p
//   member m: concat(all chunks) -> y@m (read by no actor: the run ends with the concats)
//
// s = compiler::RingSubChunks(chunk bytes) sub-chunks per member, as the compiler picks them;
// wire registers get the slots plan_registers gives (about 4 MiB, 2 to 8).
#ifndef SOFTWIRE_BENCH_ALLREDUCE_RING_PLAN_H_
#define SOFTWIRE_BENCH_ALLREDUCE_RING_PLAN_H_

#include <cstdint>

#include "proto/plan.pb.h"

namespace softwire {
namespace bench {

// One step, one piece: an all-reduce of a float32 vector of `bytes` / 4 elements on node0 and
// node1 (one cpu device each). Sources run `noop` (the bench times the exchange, not
// the values; the ring's sums are tested through the compiler's plans in the multi-device
// tests). The split, adds and concat run the cpu kernels. CHECK-fails on bytes < 64.
// With `range_views` (the compiler's default, fold_views) there is no split: each chunk's
// send and add read it as a byte range of x (plan/input_ranges.h); without, as `--no-views`
// compiles it, the split copies x into chunk registers first.
proto::Plan RingAllReducePlan(int64_t bytes, int sub_chunks, bool range_views = true);

}  // namespace bench
}  // namespace softwire

#endif  // SOFTWIRE_BENCH_ALLREDUCE_RING_PLAN_H_
