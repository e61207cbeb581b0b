// Bf16Product: one product c[M, N] = op(a) op(b) of bfloat16 matrices, accumulated and written
// in float32: the products of the bf16 precision policy (docs/PRECISION.md).
//
// Two implementations, chosen once, when the product is created:
// - oneDNN matmul (its run-time dispatch: avx512_bf16 or AMX kernels) where the CPU has native
//   bf16 (base/cpu_features.h) and the build found oneDNN. c is cut into bands of rows, one
//   primitive per band size, each band run on one of the device's threads with oneDNN
//   single-threaded there (no OpenMP pool beside the device's threads, as for OpenBLAS:
//   docs/KERNELS.md); a user-mode scratchpad, the executing thread's (thread_buffers.h).
// - Elsewhere (a Zen 3, a build without oneDNN, SOFTWIRE_CPU_FEATURES_OFF=avx512_bf16): both
//   inputs widened to float32 (exact) into buffers owned by the product, then OpenBLAS sgemm.
//   The result is the float32 product of the same bf16 values; slower than float32, since the
//   casts cost and the products do not speed up. The kernel logs a warning naming the feature.
//
// Threading: Run is called by one thread at a time (a kernel's firings do not overlap); it
// spreads bands over `parallel`. Failure: Create returns InvalidArgument when oneDNN rejects a
// shape it should take; a CPU without bf16 is not a failure.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_BF16_PRODUCT_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_BF16_PRODUCT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "base/bfloat16.h"
#include "base/status.h"
#include "runtime/kernels/cpu/product_epilogue.h"
#include "runtime/kernels/parallel_runner.h"

namespace softwire {
namespace runtime {

struct Bf16ProductShape {
  bool transpose_a = false;  // a is [K, M] instead of [M, K].
  bool transpose_b = false;  // b is [N, K] instead of [K, N].
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
};

class Bf16Product {
 public:
  virtual ~Bf16Product() = default;

  // `allow_native`: false takes the float32 fallback even on a CPU with bf16 (tests compare
  // the two paths).
  static StatusOr<std::unique_ptr<Bf16Product>> Create(const Bf16ProductShape& shape,
                                                       bool allow_native = true);

  // c = op(a) op(b); c is row-major [M, N].
  void Run(ParallelRunner* parallel, const BFloat16* a, const BFloat16* b, float* c) {
    RowsInC rows(c, shape().n);
    Run(parallel, a, b, rows);
  }

  // The same bands, each written where `epilogue` says and handed to it right after
  // (product_epilogue.h): the fused kernel's product epilogue.
  virtual void Run(ParallelRunner* parallel, const BFloat16* a, const BFloat16* b,
                   ProductEpilogue& epilogue) = 0;

  // `batch` products of this shape, stored one after another in a, b and c (batch_matmul).
  // Small products are spread over the threads whole; large ones each run in bands.
  virtual void RunBatch(ParallelRunner* parallel, const BFloat16* a, const BFloat16* b, float* c,
                        int64_t batch);

  // What runs it: "onednn brg:avx512_core_bf16" (oneDNN's name of the band primitive), or
  // "float32 fallback (openblas sgemm)".
  virtual std::string implementation() const = 0;
  virtual bool native() const = 0;
  virtual const Bf16ProductShape& shape() const = 0;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_BF16_PRODUCT_H_
