// How batch_matmul's products are laid out for cuBLAS's strided-batched call: the leading
// dimensions of a and b and, per call, where its batch of products starts and how far apart
// they are. Planned once, when the kernel is made; host code only, tested without a GPU against
// the cpu kernel's per-product offsets (batched_product_plan_test.cc).
//
// Inputs may be strided views (`a_perm`, `b_perm`, docs/OPS.md): an input read as
// transpose(x, perm) of the row-major tensor x its bytes hold, the last axis kept last. Batch
// axes are merged where a, b and c all step over them evenly (always, for dense inputs: one
// call); otherwise the longest batch axis is the batch of each call and the other batch axes
// are walked by a loop of calls (the transformer's [B, H, T, D] view of [B, T, H, D]: H calls,
// each a batch of B).
#ifndef SOFTWIRE_RUNTIME_KERNELS_CUDA_BATCHED_PRODUCT_PLAN_H_
#define SOFTWIRE_RUNTIME_KERNELS_CUDA_BATCHED_PRODUCT_PLAN_H_

#include <cstdint>
#include <vector>

#include "proto/tensor_desc.h"

namespace softwire {
namespace runtime {

// Where one strided-batched call's first product starts in a, b and c (elements).
struct ProductCall {
  int64_t a_offset = 0;
  int64_t b_offset = 0;
  int64_t c_offset = 0;
};

struct BatchedProductPlan {
  int64_t lda = 0;  // Row strides of a and b as stored (before any transpose), in elements.
  int64_t ldb = 0;
  int64_t batch = 1;  // Products per call; product j of a call is j strides past its offsets.
  int64_t a_stride = 0;
  int64_t b_stride = 0;
  int64_t c_stride = 0;
  std::vector<ProductCall> calls = {ProductCall()};
};

// a [..., rows, columns] and b likewise as the kernel sees them (the cpu kernel checked them),
// an empty perm for a dense input, and c [..., m, n] dense.
BatchedProductPlan PlanBatchedProduct(const Shape& a, const Shape& b,
                                      const std::vector<int64_t>& a_perm,
                                      const std::vector<int64_t>& b_perm, int64_t m, int64_t n);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CUDA_BATCHED_PRODUCT_PLAN_H_
