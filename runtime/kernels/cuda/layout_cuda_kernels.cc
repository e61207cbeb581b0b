// The cuda kernels that move data: transpose, slice, assemble, flat_split, flat_concat and cast
// (float32 <-> bfloat16). Every KernelDef was checked by its cpu kernel first (cuda_kernels.h),
// so these read only the numbers they need. Results are the cpu kernels' bit for bit
// (layout_launchers.h).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "proto/kernel_attributes.h"
#include "proto/tensor_desc.h"
#include "runtime/kernels/cuda/cuda_kernel_families.h"
#include "runtime/kernels/cuda/launch_kernel.h"
#include "runtime/kernels/cuda/layout_launchers.h"
#include "runtime/kernels/cuda/strided_block_plan.h"

namespace softwire {
namespace runtime {
namespace {

cuda::Word WordOf(DType dtype) {
  return dtype == DType::kBFloat16 ? cuda::Word::kTwo : cuda::Word::kFour;
}

// transpose: y[i0, i1, ...] = x[..] with y.shape[k] = x.shape[perm[k]]: the output walked with
// the input's strides permuted.
StatusOr<std::unique_ptr<Kernel>> MakeTranspose(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  SOFTWIRE_ASSIGN_OR_RETURN(
      cuda::StridedBlock block,
      PlanTranspose(ShapeOf(def.input(0)), KernelAttributes(def).RequiredInts("perm")));
  const cuda::Word word = WordOf(DTypeOf(def.input(0)));
  return MakeLaunchKernel(setup, [=](const KernelContext& context, cudaStream_t stream) {
    return cuda::GatherBlock(word, context.inputs[0].data, context.outputs[0].data, block, stream);
  });
}

// slice: y = x[begin:end] on every axis.
StatusOr<std::unique_ptr<Kernel>> MakeSlice(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  KernelAttributes attributes(def);
  SOFTWIRE_ASSIGN_OR_RETURN(cuda::StridedBlock block,
                            PlanSlice(ShapeOf(def.input(0)), attributes.RequiredInts("begin"),
                                      attributes.RequiredInts("end")));
  const cuda::Word word = WordOf(DTypeOf(def.input(0)));
  return MakeLaunchKernel(setup, [=](const KernelContext& context, cudaStream_t stream) {
    return cuda::GatherBlock(word, context.inputs[0].data, context.outputs[0].data, block, stream);
  });
}

// assemble: y = 0, then y[offset_k : offset_k + shape(x_k)] += x_k for k in input order, one
// launch per input in stream order (so each element is 0 + x0 + x1 + ... as on the cpu).
class AssembleKernel final : public CudaKernel {
 public:
  AssembleKernel(cuda::AddType type, int64_t output_bytes, std::vector<cuda::StridedBlock> blocks)
      : type_(type), output_bytes_(output_bytes), blocks_(std::move(blocks)) {}

  Status Enqueue(const KernelContext& context, const CudaStreamHandles& handles) override {
    void* y = context.outputs[0].data;
    SOFTWIRE_RETURN_IF_ERROR(CudaLaunchStatus(
        "assemble", "cudaMemsetAsync",
        cudaMemsetAsync(y, 0, static_cast<size_t>(output_bytes_), handles.stream)));
    for (size_t k = 0; k < blocks_.size(); ++k) {
      SOFTWIRE_RETURN_IF_ERROR(CudaLaunchStatus(
          "assemble", "kernel launch",
          cuda::AddIntoBlock(type_, context.inputs[k].data, y, blocks_[k], handles.stream)));
    }
    return Status::Ok();
  }

 private:
  const cuda::AddType type_;
  const int64_t output_bytes_;
  const std::vector<cuda::StridedBlock> blocks_;  // Per input: where it lands in y.
};

StatusOr<std::unique_ptr<Kernel>> MakeAssemble(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  KernelAttributes attributes(def);
  const Shape y(attributes.RequiredInts("shape"));
  const std::vector<int64_t> offsets = attributes.RequiredInts("offsets");
  std::vector<cuda::StridedBlock> blocks;
  for (int k = 0; k < def.input_size(); ++k) {
    const std::vector<int64_t> at(offsets.begin() + k * y.rank(),
                                  offsets.begin() + (k + 1) * y.rank());
    SOFTWIRE_ASSIGN_OR_RETURN(cuda::StridedBlock block, PlanBlockIn(y, ShapeOf(def.input(k)), at));
    blocks.push_back(block);
  }
  const DType dtype = DTypeOf(def.output(0));
  const cuda::AddType type = dtype == DType::kInt32      ? cuda::AddType::kInt32
                             : dtype == DType::kBFloat16 ? cuda::AddType::kBFloat16
                                                         : cuda::AddType::kFloat32;
  return std::unique_ptr<Kernel>(
      new AssembleKernel(type, y.NumElements() * SizeOf(dtype), std::move(blocks)));
}

// flat_split (x -> chunks) and flat_concat (chunks -> y): a device-to-device copy per chunk.
class FlatChunksKernel final : public CudaKernel {
 public:
  FlatChunksKernel(bool split, std::vector<int64_t> chunk_bytes)
      : split_(split), chunk_bytes_(std::move(chunk_bytes)) {}

  Status Enqueue(const KernelContext& context, const CudaStreamHandles& handles) override {
    const char* op = split_ ? "flat_split" : "flat_concat";
    int64_t at = 0;
    for (size_t k = 0; k < chunk_bytes_.size(); ++k) {
      const size_t bytes = static_cast<size_t>(chunk_bytes_[k]);
      if (bytes > 0) {
        void* to =
            split_ ? context.outputs[k].data : static_cast<char*>(context.outputs[0].data) + at;
        const void* from =
            split_ ? static_cast<const char*>(context.inputs[0].data) + at : context.inputs[k].data;
        SOFTWIRE_RETURN_IF_ERROR(CudaLaunchStatus(
            op, "cudaMemcpyAsync",
            cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, handles.stream)));
      }
      at += chunk_bytes_[k];
    }
    return Status::Ok();
  }

 private:
  const bool split_;
  const std::vector<int64_t> chunk_bytes_;
};

StatusOr<std::unique_ptr<Kernel>> MakeFlatSplit(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  std::vector<int64_t> chunk_bytes;
  for (const proto::TensorDesc& output : def.output()) {
    chunk_bytes.push_back(ShapeOf(output).NumElements() * SizeOf(DTypeOf(output)));
  }
  return std::unique_ptr<Kernel>(new FlatChunksKernel(/*split=*/true, std::move(chunk_bytes)));
}

StatusOr<std::unique_ptr<Kernel>> MakeFlatConcat(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  std::vector<int64_t> chunk_bytes;
  for (const proto::TensorDesc& input : def.input()) {
    chunk_bytes.push_back(ShapeOf(input).NumElements() * SizeOf(DTypeOf(input)));
  }
  return std::unique_ptr<Kernel>(new FlatChunksKernel(/*split=*/false, std::move(chunk_bytes)));
}

// cast: float32 <-> bfloat16 (a cast to the same type copies). With `first_firing_only` (the
// compiler's fold_weight_casts) only the kernel's first Enqueue casts: later firings write
// nothing, the optimizer update having written the copy in place (cast_kernel.cc).
class CastKernel final : public CudaKernel {
 public:
  CastKernel(DType from, DType to, int64_t elements, bool first_firing_only)
      : from_(from), to_(to), elements_(elements), first_firing_only_(first_firing_only) {}

  // Called for one firing at a time, in firing order (the queue's lock), so cast_once_ needs
  // no lock.
  Status Enqueue(const KernelContext& context, const CudaStreamHandles& handles) override {
    if (first_firing_only_ && cast_once_) return Status::Ok();
    cast_once_ = true;
    const void* x = context.inputs[0].data;
    void* y = context.outputs[0].data;
    cudaError_t error = cudaSuccess;
    if (from_ == DType::kFloat32 && to_ == DType::kBFloat16) {
      error = cuda::FloatToBFloat16(static_cast<const float*>(x), static_cast<uint16_t*>(y),
                                    elements_, handles.stream);
    } else if (from_ == DType::kBFloat16 && to_ == DType::kFloat32) {
      error = cuda::BFloat16ToFloat(static_cast<const uint16_t*>(x), static_cast<float*>(y),
                                    elements_, handles.stream);
    } else if (elements_ > 0) {
      error = cudaMemcpyAsync(y, x, static_cast<size_t>(elements_ * SizeOf(from_)),
                              cudaMemcpyDeviceToDevice, handles.stream);
    }
    return CudaLaunchStatus("cast", "kernel launch", error);
  }

 private:
  const DType from_;
  const DType to_;
  const int64_t elements_;
  const bool first_firing_only_;
  bool cast_once_ = false;
};

StatusOr<std::unique_ptr<Kernel>> MakeCast(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  KernelAttributes attributes(def);
  const bool first_firing_only = attributes.Bool("first_firing_only", false);
  return std::unique_ptr<Kernel>(new CastKernel(DTypeOf(def.input(0)), DTypeOf(def.output(0)),
                                                ShapeOf(def.input(0)).NumElements(),
                                                first_firing_only));
}

}  // namespace

void RegisterCudaLayoutKernels(KernelRegistry* registry,
                               const std::shared_ptr<const KernelRegistry>& cpu) {
  RegisterValidated(registry, cpu, "transpose", MakeTranspose);
  RegisterValidated(registry, cpu, "slice", MakeSlice);
  RegisterValidated(registry, cpu, "assemble", MakeAssemble);
  RegisterValidated(registry, cpu, "flat_split", MakeFlatSplit);
  RegisterValidated(registry, cpu, "flat_concat", MakeFlatConcat);
  RegisterValidated(registry, cpu, "cast", MakeCast);
}

}  // namespace runtime
}  // namespace softwire
