// matmul and batch_matmul on cuBLAS (cublasGemmStridedBatchedEx; a batch of one for matmul),
// float32 or bfloat16 inputs, float32 output, float32 accumulation. TF32 only where the
// device's options allow it (the queue's handle math mode, cuda_stream_queue.cc).
//
// Row-major c[M, N] = op(a) op(b) is column-major c^T[N, M] = op(b)^T op(a)^T: cuBLAS is
// called with b first and the row-major leading dimensions unchanged.
//
// batch_matmul's strided views (`a_perm`, `b_perm`) become leading dimensions, batch strides
// and a loop of calls where one stride cannot cover the batch (batched_product_plan.h).
#include <memory>
#include <utility>
#include <vector>

#include "proto/kernel_attributes.h"
#include "proto/tensor_desc.h"
#include "runtime/kernels/cuda/batched_product_plan.h"
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
  BatchedProductPlan plan;  // One cuBLAS strided-batched call per entry of plan.calls.
  cudaDataType input_type = CUDA_R_32F;
  int64_t element_bytes = 4;
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
    const BatchedProductPlan& plan = p_.plan;
    for (const ProductCall& call : plan.calls) {
      SOFTWIRE_RETURN_IF_ERROR(CublasStatus(
          *handles.cublas, "matmul",
          handles.cublas->gemm_strided_batched_ex(
              handles.blas, p_.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
              p_.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(p_.n),
              static_cast<int>(p_.m), static_cast<int>(p_.k), &alpha,
              b + call.b_offset * p_.element_bytes, p_.input_type, static_cast<int>(plan.ldb),
              plan.b_stride, a + call.a_offset * p_.element_bytes, p_.input_type,
              static_cast<int>(plan.lda), plan.a_stride, &beta, c + call.c_offset, CUDA_R_32F,
              static_cast<int>(p_.n), plan.c_stride, static_cast<int>(plan.batch),
              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)));
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
  p.plan.lda = p.transpose_a ? p.m : p.k;
  p.plan.ldb = p.transpose_b ? p.k : p.n;
  return std::unique_ptr<Kernel>(new CublasProductKernel(std::move(p)));
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
  p.plan = PlanBatchedProduct(a, b, a_perm, b_perm, p.m, p.n);
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
