// matmul and batch_matmul (docs/OPS.md) on OpenBLAS sgemm; bfloat16 inputs (the bf16 precision
// policy) through Bf16Product: oneDNN where the CPU has native bf16, float32 otherwise.
// docs/KERNELS.md records why OpenBLAS (and not oneDNN) and how the shapes of the MLP's products
// perform.
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
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/bf16_product.h"
#include "runtime/kernels/cpu/gemm_shape.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

// Reads transpose_a / transpose_b and the signature shared by matmul and batch_matmul: a and
// b both float32 or both bfloat16 (*bf16 set), c float32. With `a_perm` and `b_perm`
// (batch_matmul), also its strided views.
Status ReadTransposes(const proto::KernelDef& def, GemmShape* gemm, bool* bf16,
                      std::vector<int64_t>* a_perm = nullptr,
                      std::vector<int64_t>* b_perm = nullptr) {
  KernelAttributes attributes(def);
  gemm->transpose_a = attributes.Bool("transpose_a", false);
  gemm->transpose_b = attributes.Bool("transpose_b", false);
  if (a_perm != nullptr) *a_perm = attributes.Ints("a_perm", {});
  if (b_perm != nullptr) *b_perm = attributes.Ints("b_perm", {});
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  *bf16 = def.input_size() > 0 && DTypeOf(def.input(0)) == DType::kBFloat16;
  const DType inputs = *bf16 ? DType::kBFloat16 : DType::kFloat32;
  return CheckSignature(def, {"a", "b"}, {inputs, inputs}, {"c"}, {DType::kFloat32});
}

// The bf16 product of `gemm`'s shape, or null for a float32 one.
StatusOr<std::unique_ptr<Bf16Product>> Bf16ProductFor(const GemmShape& gemm, bool bf16) {
  if (!bf16) return std::unique_ptr<Bf16Product>();
  Bf16ProductShape shape;
  shape.transpose_a = gemm.transpose_a;
  shape.transpose_b = gemm.transpose_b;
  shape.m = gemm.m;
  shape.n = gemm.n;
  shape.k = gemm.k;
  return Bf16Product::Create(shape);
}

class MatmulKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    GemmShape gemm;
    bool bf16 = false;
    SOFTWIRE_RETURN_IF_ERROR(ReadTransposes(def, &gemm, &bf16));
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
    SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<Bf16Product> bf16_product,
                              Bf16ProductFor(gemm, bf16));
    return std::unique_ptr<Kernel>(new MatmulKernel(gemm, std::move(bf16_product)));
  }

  Status Run(const KernelContext& context) override {
    if (bf16_product_ != nullptr) {
      bf16_product_->Run(context.parallel, context.inputs[0].As<BFloat16>(),
                         context.inputs[1].As<BFloat16>(), context.outputs[0].As<float>());
      return Status::Ok();
    }
    gemm_.RunParallel(context.parallel, context.inputs[0].As<float>(),
                      context.inputs[1].As<float>(), context.outputs[0].As<float>());
    return Status::Ok();
  }

 private:
  MatmulKernel(const GemmShape& gemm, std::unique_ptr<Bf16Product> bf16_product)
      : gemm_(gemm), bf16_product_(std::move(bf16_product)) {}

  const GemmShape gemm_;
  const std::unique_ptr<Bf16Product> bf16_product_;  // Null for float32 inputs.
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
    bool bf16 = false;
    std::vector<int64_t> a_perm;
    std::vector<int64_t> b_perm;
    SOFTWIRE_RETURN_IF_ERROR(ReadTransposes(def, &gemm, &bf16, &a_perm, &b_perm));
    if (bf16 && (!a_perm.empty() || !b_perm.empty())) {
      // fold_views reads float32 inputs strided only (a bf16 product reads a cast's output).
      return KernelDefError(def, "a_perm and b_perm need float32 inputs");
    }
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
    SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<Bf16Product> bf16_product,
                              Bf16ProductFor(gemm, bf16));
    return std::unique_ptr<Kernel>(new BatchMatmulKernel(
        gemm, std::move(a_layout.offsets), std::move(b_layout.offsets), std::move(bf16_product)));
  }

  Status Run(const KernelContext& context) override {
    const int64_t batch = static_cast<int64_t>(a_offsets_.size());
    if (bf16_product_ != nullptr) {  // Dense inputs (Create refuses strided bf16 views).
      bf16_product_->RunBatch(context.parallel, context.inputs[0].As<BFloat16>(),
                              context.inputs[1].As<BFloat16>(), context.outputs[0].As<float>(),
                              batch);
      return Status::Ok();
    }
    const float* a = context.inputs[0].As<float>();
    const float* b = context.inputs[1].As<float>();
    float* c = context.outputs[0].As<float>();
    auto multiply = [&](int64_t begin, int64_t end) {
      for (int64_t index = begin; index < end; ++index) {
        gemm_.Run(a + a_offsets_[index], b + b_offsets_[index], c + index * gemm_.c_elements());
      }
    };
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
                    std::vector<int64_t> b_offsets, std::unique_ptr<Bf16Product> bf16_product)
      : gemm_(gemm),
        a_offsets_(std::move(a_offsets)),
        b_offsets_(std::move(b_offsets)),
        bf16_product_(std::move(bf16_product)) {}

  const GemmShape gemm_;
  const std::vector<int64_t> a_offsets_;  // Per batch index: where its matrix of a starts.
  const std::vector<int64_t> b_offsets_;
  const std::unique_ptr<Bf16Product> bf16_product_;  // Null for float32 inputs.
};

}  // namespace

void RegisterMatmulKernels(KernelRegistry* registry) {
  registry->Register("matmul", MatmulKernel::Create);
  registry->Register("batch_matmul", BatchMatmulKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
