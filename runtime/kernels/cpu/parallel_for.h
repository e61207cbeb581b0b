// How cpu kernels spread loops over the device's cores (KernelContext::parallel).
//
// Two rules keep parallel loops cheap:
// - Small loops stay on the calling thread. A chunk must carry at least kMinParallelWork
//   element operations (about 10-30 us of work), enough to pay for handing it to another core.
// - No allocation per call. ParallelRunner takes a std::function, which stores a functor of up
//   to two pointers in place and heap-allocates larger ones. ParallelFor below passes the body
//   by pointer, so any lambda may be used.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_PARALLEL_FOR_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_PARALLEL_FOR_H_

#include <algorithm>
#include <cstdint>

#include "runtime/kernels/parallel_runner.h"

namespace softwire {
namespace runtime {

// Element operations worth one parallel chunk.
constexpr int64_t kMinParallelWork = int64_t{1} << 15;

// The min_chunk, in items, for a loop whose items each cost `work_per_item` element operations.
inline int64_t MinChunkFor(int64_t work_per_item) {
  return std::max<int64_t>(1, kMinParallelWork / std::max<int64_t>(1, work_per_item));
}

// Calls body(begin, end) over disjoint ranges covering [0, count) through `runner` (see
// ParallelRunner::ParallelFor). Runs inline when the loop is too small to split.
template <typename Body>
void ParallelFor(ParallelRunner* runner, int64_t count, int64_t min_chunk, const Body& body) {
  if (count <= 0) return;
  if (runner->threads() <= 1 || count < 2 * min_chunk) {
    body(int64_t{0}, count);
    return;
  }
  const Body* body_pointer = &body;
  runner->ParallelFor(count, min_chunk,
                      [body_pointer](int64_t begin, int64_t end) { (*body_pointer)(begin, end); });
}

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_PARALLEL_FOR_H_
