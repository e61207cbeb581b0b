// matmul and batch_matmul on cuBLAS (cublasGemmStridedBatchedEx; a batch of one for matmul),
// float32 or bfloat16 inputs, float32 output, float32 accumulation. TF32 only where the
// device's options allow it (the queue's handle math mode, cuda_stream_queue.cc).
//
// Row-major c[M, N] = op(a) op(b) is column-major c^T[N, M] = op(b)^T op(a)^T: cuBLAS is
// called with b first and the row-major leading dimensions unchanged.
//
// batch_matmul's strided views (`a_perm`, `b_perm`, docs/OPS.md: an input read as
// transpose(x, perm) of the tensor its bytes hold, the last axis kept last) become leading
// dimensions and batch strides. Batch axes are merged where a, b and c all step over them
// evenly (always, for dense inputs: one cuBLAS call); otherwise the longest batch axis is the
// strided batch of each call and the other batch axes are walked by a loop of calls (the
// transformer's [B, H, T, D] view of [B, T, H, D]: H calls, each a batch of B).
#include <memory>
#include <string>
#include <vector>

#include "proto/kernel_attributes.h"
#include "proto/tensor_desc.h"
#include "runtime/kernels/cuda/cuda_kernel_families.h"

namespace softwire {
namespace runtime {
namespace {

// One cuBLAS strided-batched call per entry of `calls`: `batch` products, matrix j of the call
// at the call's offsets plus j times the strides (elements).
struct ProductCall {
  int64_t a_offset = 0;
  int64_t b_offset = 0;
  int64_t c_offset = 0;
};

struct Product {
  bool transpose_a = false;
  bool transpose_b = false;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t lda = 0;  // Row strides of a, b as stored (before op()), in elements.
  int64_t ldb = 0;
  int64_t batch = 1;
  int64_t a_stride = 0;
  int64_t b_stride = 0;
  int64_t c_stride = 0;
  std::vector<ProductCall> calls = {ProductCall()};
  cudaDataType input_type = CUDA_R_32F;
  size_t element_bytes = 4;
  int64_t c_elements = 0;  // Of the whole output.
};

class CublasProductKernel final : public CudaKernel {
 public:
  explicit CublasProductKernel(Product product) : p_(std::move(product)) {}

  Status Enqueue(const KernelContext& context, const CudaStreamHandles& handles) override {
    float* c = context.outputs[0].As<float>();
    if (p_.k == 0) {  // An empty sum: cuBLAS may leave c untouched.
      return CudaLaunchStatus(
          "matmul", "cudaMemsetAsync",
          cudaMemsetAsync(c, 0, sizeof(float) * static_cast<size_t>(p_.c_elements),
                          handles.stream));
    }
    const float alpha = 1.0f;
    const float beta = 0.0f;
    const char* a = static_cast<const char*>(context.inputs[0].data);
    const char* b = static_cast<const char*>(context.inputs[1].data);
    for (const ProductCall& call : p_.calls) {
      SOFTWIRE_RETURN_IF_ERROR(
          CublasStatus(*handles.cublas, "matmul",
                       handles.cublas->gemm_strided_batched_ex(
                           handles.blas, p_.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                           p_.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(p_.n),
                           static_cast<int>(p_.m), static_cast<int>(p_.k), &alpha,
                           b + call.b_offset * static_cast<int64_t>(p_.element_bytes),
                           p_.input_type, static_cast<int>(p_.ldb), p_.b_stride,
                           a + call.a_offset * static_cast<int64_t>(p_.element_bytes),
                           p_.input_type, static_cast<int>(p_.lda), p_.a_stride, &beta,
                           c + call.c_offset, CUDA_R_32F, static_cast<int>(p_.n), p_.c_stride,
                           static_cast<int>(p_.batch), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)));
    }
    return Status::Ok();
  }

 private:
  const Product p_;
};

// Reads the transposes and input dtype; the cpu kernel already checked everything.
Product ReadProduct(const proto::KernelDef& def) {
  KernelAttributes attributes(def);
  Product product;
  product.transpose_a = attributes.Bool("transpose_a", false);
  product.transpose_b = attributes.Bool("transpose_b", false);
  const bool bf16 = DTypeOf(def.input(0)) == DType::kBFloat16;
  product.input_type = bf16 ? CUDA_R_16BF : CUDA_R_32F;
  product.element_bytes = bf16 ? 2 : 4;
  product.c_elements = ShapeOf(def.output(0)).NumElements();
  return product;
}

StatusOr<std::unique_ptr<Kernel>> MakeMatmul(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  Product p = ReadProduct(def);
  Shape a = ShapeOf(def.input(0));
  Shape b = ShapeOf(def.input(1));
  p.k = p.transpose_a ? a.dim(0) : a.dim(-1);
  p.m = p.transpose_a ? a.dim(1) : a.NumElements(0, a.rank() - 1);
  p.n = p.transpose_b ? b.dim(0) : b.dim(1);
  p.lda = p.transpose_a ? p.m : p.k;
  p.ldb = p.transpose_b ? p.k : p.n;
  return std::unique_ptr<Kernel>(new CublasProductKernel(std::move(p)));
}

// Per axis of a batch_matmul input as the kernel sees it (`logical`), its stride in the bytes
// it reads: row-major, or with `perm` (x.shape[perm[i]] = logical.shape[i]) x's strides.
std::vector<int64_t> StridesOf(const Shape& logical, const std::vector<int64_t>& perm) {
  const int rank = logical.rank();
  std::vector<int64_t> stored(static_cast<size_t>(rank));
  for (int axis = 0; axis < rank; ++axis) {
    stored[perm.empty() ? axis : perm[axis]] = logical.dim(axis);
  }
  std::vector<int64_t> stored_strides(static_cast<size_t>(rank), 1);
  for (int axis = rank - 2; axis >= 0; --axis) {
    stored_strides[axis] = stored_strides[axis + 1] * stored[axis + 1];
  }
  std::vector<int64_t> strides(static_cast<size_t>(rank));
  for (int axis = 0; axis < rank; ++axis) {
    strides[axis] = stored_strides[perm.empty() ? axis : perm[axis]];
  }
  return strides;
}

// A batch axis (possibly merged): its extent and the strides of a, b and c along it.
struct BatchAxis {
  int64_t extent = 1;
  int64_t a = 0;
  int64_t b = 0;
  int64_t c = 0;
};

// Fills p's batch, strides and calls from the batch axes (outermost first).
void PlanBatch(const std::vector<BatchAxis>& axes, Product* p) {
  std::vector<BatchAxis> merged;
  for (const BatchAxis& axis : axes) {
    if (axis.extent == 1) continue;
    if (!merged.empty()) {
      BatchAxis& outer = merged.back();
      if (outer.a == axis.extent * axis.a && outer.b == axis.extent * axis.b &&
          outer.c == axis.extent * axis.c) {
        outer.extent *= axis.extent;
        outer.a = axis.a;
        outer.b = axis.b;
        outer.c = axis.c;
        continue;
      }
    }
    merged.push_back(axis);
  }
  if (merged.empty()) return;  // One product: the default single call, batch 1.
  size_t longest = 0;
  for (size_t axis = 1; axis < merged.size(); ++axis) {
    if (merged[axis].extent >= merged[longest].extent) longest = axis;
  }
  p->batch = merged[longest].extent;
  p->a_stride = merged[longest].a;
  p->b_stride = merged[longest].b;
  p->c_stride = merged[longest].c;
  std::vector<BatchAxis> outer;
  for (size_t axis = 0; axis < merged.size(); ++axis) {
    if (axis != longest) outer.push_back(merged[axis]);
  }
  int64_t count = 1;
  for (const BatchAxis& axis : outer) count *= axis.extent;
  p->calls.clear();
  for (int64_t index = 0; index < count; ++index) {
    ProductCall call;
    int64_t rest = index;
    for (int axis = static_cast<int>(outer.size()) - 1; axis >= 0; --axis) {
      const int64_t coordinate = rest % outer[axis].extent;
      rest /= outer[axis].extent;
      call.a_offset += coordinate * outer[axis].a;
      call.b_offset += coordinate * outer[axis].b;
      call.c_offset += coordinate * outer[axis].c;
    }
    p->calls.push_back(call);
  }
}

StatusOr<std::unique_ptr<Kernel>> MakeBatchMatmul(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  KernelAttributes attributes(def);
  const std::vector<int64_t> a_perm = attributes.Ints("a_perm", {});
  const std::vector<int64_t> b_perm = attributes.Ints("b_perm", {});
  Product p = ReadProduct(def);
  Shape a = ShapeOf(def.input(0));
  Shape b = ShapeOf(def.input(1));
  p.m = p.transpose_a ? a.dim(-1) : a.dim(-2);
  p.k = p.transpose_a ? a.dim(-2) : a.dim(-1);
  p.n = p.transpose_b ? b.dim(-2) : b.dim(-1);
  const std::vector<int64_t> a_strides = StridesOf(a, a_perm);
  const std::vector<int64_t> b_strides = StridesOf(b, b_perm);
  const int rank = a.rank();
  p.lda = a_strides[static_cast<size_t>(rank - 2)];
  p.ldb = b_strides[static_cast<size_t>(rank - 2)];
  std::vector<BatchAxis> axes(static_cast<size_t>(rank - 2));
  int64_t c_stride = p.m * p.n;
  for (int axis = rank - 3; axis >= 0; --axis) {
    axes[axis] = BatchAxis{a.dim(axis), a_strides[axis], b_strides[axis], c_stride};
    c_stride *= a.dim(axis);
  }
  PlanBatch(axes, &p);
  return std::unique_ptr<Kernel>(new CublasProductKernel(std::move(p)));
}

}  // namespace

void RegisterCudaMatmulKernels(KernelRegistry* registry,
                               const std::shared_ptr<const KernelRegistry>& cpu) {
  RegisterValidated(registry, cpu, "matmul", MakeMatmul);
  RegisterValidated(registry, cpu, "batch_matmul", MakeBatchMatmul);
}

}  // namespace runtime
}  // namespace softwire
