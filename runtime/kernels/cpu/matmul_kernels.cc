// matmul and batch_matmul (docs/OPS.md) on OpenBLAS sgemm. docs/KERNELS.md records why
// OpenBLAS (and not oneDNN) and how the shapes of the MLP's products perform.
//
// Parallelism, two ways:
// - OpenBLAS with several threads (SetBlasThreads(n > 1)): each product is one sgemm call and
//   OpenBLAS's own pool splits it.
// - OpenBLAS single-threaded (SetBlasThreads(1)): a product of at least 64^3 multiply-adds is
//   cut into bands of rows (or of columns, when c is short and wide) and each of the device
//   runner's threads multiplies its bands with its own sgemm call. No second thread pool then
//   competes with the runner's, and the kernels that follow a matmul do not share the cores with
//   OpenBLAS's spinning workers (docs/KERNELS.md measures both).
// batch_matmul of many small matrices spreads the batch over the runner either way: OpenBLAS
// runs a product below 64^3 multiply-adds on one thread anyway.
#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

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
  int64_t c_elements() const { return m * n; }

  void Run(const float* a, const float* b, float* c) const { RunBlock(a, b, c, 0, m, 0, n); }

  // Rows [row_begin, row_end) and columns [column_begin, column_end) of c.
  void RunBlock(const float* a, const float* b, float* c, int64_t row_begin, int64_t row_end,
                int64_t column_begin, int64_t column_end) const {
    const int64_t rows = row_end - row_begin;
    const int64_t columns = column_end - column_begin;
    if (rows <= 0 || columns <= 0) return;
    float* c_block = c + row_begin * n + column_begin;
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
    if (parallel->threads() <= 1 || m * n * k < kBlasSingleThreadWork ||
        openblas_get_num_threads() > 1) {
      Run(a, b, c);
      return;
    }
    // Bands of 32 rows or columns keep each sgemm call's edges on its register-block sizes.
    constexpr int64_t kBand = 32;
    const bool split_rows = m >= n || n < 2 * kBand;
    const int64_t extent = split_rows ? m : n;
    const int64_t bands = (extent + kBand - 1) / kBand;
    ParallelFor(parallel, bands, 1, [&](int64_t begin, int64_t end) {
      const int64_t first = begin * kBand;
      const int64_t last = std::min(extent, end * kBand);
      if (split_rows) {
        RunBlock(a, b, c, first, last, 0, n);
      } else {
        RunBlock(a, b, c, 0, m, first, last);
      }
    });
  }
};

// Reads transpose_a / transpose_b and the signature shared by matmul and batch_matmul; with
// `a_perm` and `b_perm` (batch_matmul), also its strided views.
Status ReadTransposes(const proto::KernelDef& def, GemmShape* gemm,
                      std::vector<int64_t>* a_perm = nullptr,
                      std::vector<int64_t>* b_perm = nullptr) {
  KernelAttributes attributes(def);
  gemm->transpose_a = attributes.Bool("transpose_a", false);
  gemm->transpose_b = attributes.Bool("transpose_b", false);
  if (a_perm != nullptr) *a_perm = attributes.Ints("a_perm", {});
  if (b_perm != nullptr) *b_perm = attributes.Ints("b_perm", {});
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  return CheckSignature(def, {"a", "b"}, {DType::kFloat32, DType::kFloat32}, {"c"},
                        {DType::kFloat32});
}

class MatmulKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    GemmShape gemm;
    SOFTWIRE_RETURN_IF_ERROR(ReadTransposes(def, &gemm));
    Shape a = ShapeOf(def.input(0));
    Shape b = ShapeOf(def.input(1));
    if (b.rank() != 2) return KernelDefError(def, "b must have rank 2, not " + b.ToString());
    if (a.rank() < 1 || (gemm.transpose_a && a.rank() != 2)) {
      return KernelDefError(
          def, "a must have rank 2 (or rank >= 1 without transpose_a), not " + a.ToString());
    }
    // Without transpose_a, a's leading axes flatten into M: a linear layer per position.
    gemm.k = gemm.transpose_a ? a.dim(0) : a.dim(-1);
    gemm.m = gemm.transpose_a ? a.dim(1) : a.NumElements(0, a.rank() - 1);
    int64_t b_k = gemm.transpose_b ? b.dim(1) : b.dim(0);
    gemm.n = gemm.transpose_b ? b.dim(0) : b.dim(1);
    if (b_k != gemm.k) {
      return KernelDefError(def, "inner extents differ: a " + a.ToString() + " and b " +
                                     b.ToString() + " give K " + std::to_string(gemm.k) + " and " +
                                     std::to_string(b_k));
    }
    std::vector<int64_t> c_dims;
    if (gemm.transpose_a) {
      c_dims = {gemm.m, gemm.n};
    } else {
      c_dims.assign(a.dims().begin(), a.dims().end() - 1);
      c_dims.push_back(gemm.n);
    }
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output c", ShapeOf(def.output(0)), Shape(c_dims)));
    return std::unique_ptr<Kernel>(new MatmulKernel(gemm));
  }

  Status Run(const KernelContext& context) override {
    gemm_.RunParallel(context.parallel, context.inputs[0].As<float>(),
                      context.inputs[1].As<float>(), context.outputs[0].As<float>());
    return Status::Ok();
  }

 private:
  explicit MatmulKernel(const GemmShape& gemm) : gemm_(gemm) {}

  const GemmShape gemm_;
};

// Where each matrix of a batch_matmul input starts, and its row stride: dense, or a strided
// view (`a_perm`, `b_perm`, docs/OPS.md): the input is transpose(x, perm) of the row-major
// tensor x its bytes hold, with the last axis kept last, so each matrix's rows are contiguous.
struct BatchLayout {
  std::vector<int64_t> offsets;  // Per batch index, in elements.
  int64_t row_stride = 0;        // 0: dense.
};

StatusOr<BatchLayout> LayoutOf(const proto::KernelDef& def, const std::string& input,
                               const Shape& logical, const std::vector<int64_t>& perm) {
  const int rank = logical.rank();
  const int batch_rank = rank - 2;
  const int64_t batch = logical.NumElements(0, batch_rank);
  const int64_t matrix = logical.NumElements(batch_rank, rank);
  BatchLayout layout;
  if (perm.empty()) {
    for (int64_t index = 0; index < batch; ++index) layout.offsets.push_back(index * matrix);
    return layout;
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool valid = static_cast<int>(perm.size()) == rank && perm.back() == rank - 1;
  for (int axis = 0; valid && axis < rank; ++axis) valid = sorted[axis] == axis;
  if (!valid) {
    return KernelDefError(def, input + "_perm must permute the " + std::to_string(rank) +
                                   " axes of " + input + " and keep the last one last");
  }
  std::vector<int64_t> stored(rank);  // x's extents: x.shape[perm[i]] = input.shape[i].
  for (int axis = 0; axis < rank; ++axis) stored[perm[axis]] = logical.dim(axis);
  std::vector<int64_t> stored_stride(rank, 1);
  for (int axis = rank - 2; axis >= 0; --axis)
    stored_stride[axis] = stored_stride[axis + 1] * stored[axis + 1];
  layout.row_stride = stored_stride[perm[rank - 2]];
  for (int64_t index = 0; index < batch; ++index) {
    int64_t rest = index;
    int64_t offset = 0;
    for (int axis = batch_rank - 1; axis >= 0; --axis) {
      offset += (rest % logical.dim(axis)) * stored_stride[perm[axis]];
      rest /= logical.dim(axis);
    }
    layout.offsets.push_back(offset);
  }
  return layout;
}

class BatchMatmulKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    GemmShape gemm;
    std::vector<int64_t> a_perm;
    std::vector<int64_t> b_perm;
    SOFTWIRE_RETURN_IF_ERROR(ReadTransposes(def, &gemm, &a_perm, &b_perm));
    Shape a = ShapeOf(def.input(0));
    Shape b = ShapeOf(def.input(1));
    if (a.rank() < 2 || a.rank() != b.rank()) {
      return KernelDefError(
          def, "a and b must have one rank >= 2, not " + a.ToString() + " and " + b.ToString());
    }
    int batch_rank = a.rank() - 2;
    for (int axis = 0; axis < batch_rank; ++axis) {
      if (a.dim(axis) != b.dim(axis)) {
        return KernelDefError(def, "batch axes differ: a " + a.ToString() + ", b " + b.ToString());
      }
    }
    gemm.m = gemm.transpose_a ? a.dim(-1) : a.dim(-2);
    gemm.k = gemm.transpose_a ? a.dim(-2) : a.dim(-1);
    int64_t b_k = gemm.transpose_b ? b.dim(-1) : b.dim(-2);
    gemm.n = gemm.transpose_b ? b.dim(-2) : b.dim(-1);
    if (b_k != gemm.k) {
      return KernelDefError(def,
                            "inner extents differ: a " + a.ToString() + " and b " + b.ToString());
    }
    std::vector<int64_t> c_dims(a.dims().begin(), a.dims().begin() + batch_rank);
    c_dims.push_back(gemm.m);
    c_dims.push_back(gemm.n);
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output c", ShapeOf(def.output(0)), Shape(c_dims)));
    SOFTWIRE_ASSIGN_OR_RETURN(BatchLayout a_layout, LayoutOf(def, "a", a, a_perm));
    SOFTWIRE_ASSIGN_OR_RETURN(BatchLayout b_layout, LayoutOf(def, "b", b, b_perm));
    gemm.a_row_stride = a_layout.row_stride;
    gemm.b_row_stride = b_layout.row_stride;
    return std::unique_ptr<Kernel>(
        new BatchMatmulKernel(gemm, std::move(a_layout.offsets), std::move(b_layout.offsets)));
  }

  Status Run(const KernelContext& context) override {
    const float* a = context.inputs[0].As<float>();
    const float* b = context.inputs[1].As<float>();
    float* c = context.outputs[0].As<float>();
    auto multiply = [&](int64_t begin, int64_t end) {
      for (int64_t index = begin; index < end; ++index) {
        gemm_.Run(a + a_offsets_[index], b + b_offsets_[index], c + index * gemm_.c_elements());
      }
    };
    const int64_t batch = static_cast<int64_t>(a_offsets_.size());
    int64_t work = gemm_.m * gemm_.n * gemm_.k;
    if (work < kBlasSingleThreadWork) {
      ParallelFor(context.parallel, batch, MinChunkFor(work), multiply);
    } else {
      for (int64_t index = 0; index < batch; ++index) {  // Each product is worth splitting.
        gemm_.RunParallel(context.parallel, a + a_offsets_[index], b + b_offsets_[index],
                          c + index * gemm_.c_elements());
      }
    }
    return Status::Ok();
  }

 private:
  BatchMatmulKernel(const GemmShape& gemm, std::vector<int64_t> a_offsets,
                    std::vector<int64_t> b_offsets)
      : gemm_(gemm), a_offsets_(std::move(a_offsets)), b_offsets_(std::move(b_offsets)) {}

  const GemmShape gemm_;
  const std::vector<int64_t> a_offsets_;  // Per batch index: where its matrix of a starts.
  const std::vector<int64_t> b_offsets_;
};

}  // namespace

void RegisterMatmulKernels(KernelRegistry* registry) {
  registry->Register("matmul", MatmulKernel::Create);
  registry->Register("batch_matmul", BatchMatmulKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
