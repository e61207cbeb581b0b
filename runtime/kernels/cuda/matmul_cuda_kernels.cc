// matmul and batch_matmul on cuBLAS (cublasGemmStridedBatchedEx; a batch of one for matmul),
// float32 or bfloat16 inputs, float32 output, float32 accumulation. TF32 only where the
// device's options allow it (the queue's handle math mode, cuda_stream_queue.cc).
//
// Row-major c[M, N] = op(a) op(b) is column-major c^T[N, M] = op(b)^T op(a)^T: cuBLAS is
// called with b first and the row-major leading dimensions unchanged.
// Not yet: batch_matmul's strided views (a_perm, b_perm), refused at load (docs/CUDA.md).
#include <memory>
#include <string>
#include <vector>

#include "proto/kernel_attributes.h"
#include "proto/tensor_desc.h"
#include "runtime/kernels/cuda/cuda_kernel_families.h"

namespace softwire {
namespace runtime {
namespace {

struct Product {
  bool transpose_a = false;
  bool transpose_b = false;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;
  cudaDataType input_type = CUDA_R_32F;
};

class CublasProductKernel final : public CudaKernel {
 public:
  explicit CublasProductKernel(const Product& product) : p_(product) {}

  Status Enqueue(const KernelContext& context, const CudaStreamHandles& handles) override {
    float* c = context.outputs[0].As<float>();
    if (p_.k == 0) {  // An empty sum: cuBLAS may leave c untouched.
      return CudaLaunchStatus(
          "matmul", "cudaMemsetAsync",
          cudaMemsetAsync(c, 0, sizeof(float) * static_cast<size_t>(p_.m * p_.n * p_.batch),
                          handles.stream));
    }
    const float alpha = 1.0f;
    const float beta = 0.0f;
    const int64_t lda = p_.transpose_a ? p_.m : p_.k;
    const int64_t ldb = p_.transpose_b ? p_.k : p_.n;
    return CublasStatus(
        *handles.cublas, "matmul",
        handles.cublas->gemm_strided_batched_ex(
            handles.blas, p_.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
            p_.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(p_.n),
            static_cast<int>(p_.m), static_cast<int>(p_.k), &alpha, context.inputs[1].data,
            p_.input_type, static_cast<int>(ldb), p_.k * p_.n, context.inputs[0].data,
            p_.input_type, static_cast<int>(lda), p_.m * p_.k, &beta, c, CUDA_R_32F,
            static_cast<int>(p_.n), p_.m * p_.n, static_cast<int>(p_.batch), CUBLAS_COMPUTE_32F,
            CUBLAS_GEMM_DEFAULT));
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
  product.input_type = DTypeOf(def.input(0)) == DType::kBFloat16 ? CUDA_R_16BF : CUDA_R_32F;
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
  return std::unique_ptr<Kernel>(new CublasProductKernel(p));
}

StatusOr<std::unique_ptr<Kernel>> MakeBatchMatmul(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  KernelAttributes attributes(def);
  if (!attributes.Ints("a_perm", {}).empty() || !attributes.Ints("b_perm", {}).empty()) {
    return UnimplementedError(
        "batch_matmul: strided views (a_perm, b_perm) have no cuda kernel yet");
  }
  Product p = ReadProduct(def);
  Shape a = ShapeOf(def.input(0));
  Shape b = ShapeOf(def.input(1));
  p.m = p.transpose_a ? a.dim(-1) : a.dim(-2);
  p.k = p.transpose_a ? a.dim(-2) : a.dim(-1);
  p.n = p.transpose_b ? b.dim(-2) : b.dim(-1);
  p.batch = a.NumElements(0, a.rank() - 2);
  return std::unique_ptr<Kernel>(new CublasProductKernel(p));
}

}  // namespace

void RegisterCudaMatmulKernels(KernelRegistry* registry,
                               const std::shared_ptr<const KernelRegistry>& cpu) {
  RegisterValidated(registry, cpu, "matmul", MakeMatmul);
  RegisterValidated(registry, cpu, "batch_matmul", MakeBatchMatmul);
}

}  // namespace runtime
}  // namespace softwire
