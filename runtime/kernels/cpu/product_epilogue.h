// ProductEpilogue: what runs on the rows of a product's c as soon as they are computed, while
// they are still in cache: the element-wise chain a fused kernel folds into the product that
// feeds it (docs/OPS.md "fused", a program that starts with matmul). GemmShape::RunParallel and
// Bf16Product::Run take one instead of c; they compute c in exactly the calls, bands and order
// they use without it, so c holds the same values, only its rows go where Rows says.
//
// Contract: for every range of rows the product computes in one call (a band of rows on one of
// the device's threads; all of c when the product runs whole or in bands of columns), the
// product calls Rows(begin, end) on the thread that computes them, writes rows [begin, end)
// there (row stride N), then calls Written on the same thread. Ranges are disjoint and cover
// [0, M); calls for different ranges may run concurrently, so both must be thread-safe for
// disjoint ranges.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_PRODUCT_EPILOGUE_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_PRODUCT_EPILOGUE_H_

#include <cstdint>

#include "runtime/kernels/parallel_runner.h"

namespace softwire {
namespace runtime {

class ProductEpilogue {
 public:
  virtual ~ProductEpilogue() = default;

  // Where rows [begin, end) of c are to be written: (end - begin) x N floats.
  virtual float* Rows(int64_t begin, int64_t end) = 0;

  // Rows [begin, end) of c are at `rows`. `parallel`: the device's runner when the call is
  // outside any parallel loop (the product ran whole, or in bands of columns), so the
  // epilogue may spread its work over it; null inside a band.
  virtual void Written(float* rows, int64_t begin, int64_t end, ParallelRunner* parallel) = 0;
};

// No epilogue: rows land in c itself, nothing follows (the plain products).
class RowsInC final : public ProductEpilogue {
 public:
  RowsInC(float* c, int64_t n) : c_(c), n_(n) {}
  float* Rows(int64_t begin, int64_t) override { return c_ + begin * n_; }
  void Written(float*, int64_t, int64_t, ParallelRunner*) override {}

 private:
  float* const c_;
  const int64_t n_;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_PRODUCT_EPILOGUE_H_
