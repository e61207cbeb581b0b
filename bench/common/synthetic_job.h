// The synthetic job of the compile and simulator benchmarks (bench/compile, bench/simulator):
// a deep residual stack, transformer-like without attention. Every block is
//   layer_norm -> matmul (C x 4C) -> bias_add -> gelu -> matmul (4C x C) -> bias_add -> add
// (7 ops, 6 variables), after an input projection and before a classifier head and loss,
// trained with Adam. One definition, so that their figures describe the same job.
#ifndef SOFTWIRE_BENCH_COMMON_SYNTHETIC_JOB_H_
#define SOFTWIRE_BENCH_COMMON_SYNTHETIC_JOB_H_

#include <cstdint>

#include "proto/job.pb.h"

namespace softwire {
namespace bench {

// A training job of about `ops` forward ops on micro-batches of `batch` rows of `width`.
proto::Job SyntheticJob(int ops, int64_t batch, int64_t width);

}  // namespace bench
}  // namespace softwire

#endif  // SOFTWIRE_BENCH_COMMON_SYNTHETIC_JOB_H_
