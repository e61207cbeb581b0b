// GemmShape: one row-major float32 product c[M, N] = op(a) op(b) on OpenBLAS sgemm, whole or
// in bands of rows (or columns) on the device's threads. matmul_kernels.cc explains the two
// ways of running it in parallel; bf16_product.cc uses it for its float32 fallback, and the
// fused kernel with an epilogue (product_epilogue.h).
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_GEMM_SHAPE_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_GEMM_SHAPE_H_

#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "runtime/kernels/cpu/parallel_for.h"
#include "runtime/kernels/cpu/product_epilogue.h"

namespace softwire {
namespace runtime {

// OpenBLAS's GEMM_MULTITHREAD_THRESHOLD (4) * 65536: products with fewer multiply-adds run on
// the calling thread.
constexpr int64_t kBlasSingleThreadWork = int64_t{4} * 65536;

// One row-major product c[M, N] = op(a) op(b) with the leading dimensions sgemm needs.
struct GemmShape {
  bool transpose_a = false;
  bool transpose_b = false;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;

  // Row strides of a and b as stored; 0: dense (a strided view sets them, batch_matmul).
  int64_t a_row_stride = 0;
  int64_t b_row_stride = 0;

  int64_t lda() const { return a_row_stride > 0 ? a_row_stride : transpose_a ? m : k; }
  int64_t ldb() const { return b_row_stride > 0 ? b_row_stride : transpose_b ? k : n; }
  // Elements of a dense a and b.
  int64_t a_elements() const { return m * k; }
  int64_t b_elements() const { return k * n; }
  int64_t c_elements() const { return m * n; }

  void Run(const float* a, const float* b, float* c) const { RunBlock(a, b, c, 0, m, 0, n); }

  // Rows [row_begin, row_end) and columns [column_begin, column_end) of c.
  void RunBlock(const float* a, const float* b, float* c, int64_t row_begin, int64_t row_end,
                int64_t column_begin, int64_t column_end) const {
    RunBlockAt(a, b, c + row_begin * n, row_begin, row_end, column_begin, column_end);
  }

  // The same block, with `c_rows` where row `row_begin` of c lies (row stride N).
  void RunBlockAt(const float* a, const float* b, float* c_rows, int64_t row_begin, int64_t row_end,
                  int64_t column_begin, int64_t column_end) const {
    const int64_t rows = row_end - row_begin;
    const int64_t columns = column_end - column_begin;
    if (rows <= 0 || columns <= 0) return;
    float* c_block = c_rows + column_begin;
    if (k == 0) {  // An empty sum; sgemm may leave c untouched.
      for (int64_t row = 0; row < rows; ++row) {
        std::memset(c_block + row * n, 0, sizeof(float) * static_cast<size_t>(columns));
      }
      return;
    }
    const float* a_block = transpose_a ? a + row_begin : a + row_begin * lda();
    const float* b_block = transpose_b ? b + column_begin * ldb() : b + column_begin;
    cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
                transpose_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(rows),
                static_cast<blasint>(columns), static_cast<blasint>(k), 1.0f, a_block,
                static_cast<blasint>(lda()), b_block, static_cast<blasint>(ldb()), 0.0f, c_block,
                static_cast<blasint>(n));
  }

  // c = op(a) op(b) with the device's threads: when OpenBLAS runs single-threaded and the
  // product is large, the runner's threads each multiply a band of rows (or columns, when c
  // is wide and short) with their own sgemm call.
  void RunParallel(ParallelRunner* parallel, const float* a, const float* b, float* c) const {
    RowsInC rows(c, n);
    RunParallel(parallel, a, b, rows);
  }

  // The same calls, each range of rows written where `epilogue` says and handed to it right
  // after (product_epilogue.h): per band of rows when the product is split by rows.
  void RunParallel(ParallelRunner* parallel, const float* a, const float* b,
                   ProductEpilogue& epilogue) const {
    if (parallel->threads() <= 1 || m * n * k < kBlasSingleThreadWork ||
        openblas_get_num_threads() > 1) {
      float* rows = epilogue.Rows(0, m);
      RunBlockAt(a, b, rows, 0, m, 0, n);
      epilogue.Written(rows, 0, m, parallel);
      return;
    }
    // Bands of 32 rows or columns keep each sgemm call's edges on its register-block sizes.
    constexpr int64_t kBand = 32;
    const bool split_rows = m >= n || n < 2 * kBand;
    const int64_t extent = split_rows ? m : n;
    const int64_t bands = (extent + kBand - 1) / kBand;
    float* all_rows = split_rows ? nullptr : epilogue.Rows(0, m);
    ParallelFor(parallel, bands, 1, [&](int64_t begin, int64_t end) {
      const int64_t first = begin * kBand;
      const int64_t last = std::min(extent, end * kBand);
      if (split_rows) {
        float* rows = epilogue.Rows(first, last);
        RunBlockAt(a, b, rows, first, last, 0, n);
        epilogue.Written(rows, first, last, nullptr);
      } else {
        RunBlockAt(a, b, all_rows, 0, m, first, last);
      }
    });
    if (!split_rows) epilogue.Written(all_rows, 0, m, parallel);
  }
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_GEMM_SHAPE_H_
