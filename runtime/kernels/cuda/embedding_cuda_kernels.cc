// The cuda kernels of embedding (row gather) and embedding_grad (row scatter-add, deterministic:
// a thread per table element sums its terms in id order, layout_launchers.h). Every KernelDef
// was checked by its cpu kernel first (cuda_kernels.h). Ids are not checked per firing: an id no
// part holds gives a NaN row where the cpu kernel fails the firing, and embedding_grad skips it
// (docs/CUDA.md, "Bad data").
#include <memory>

#include "proto/kernel_attributes.h"
#include "proto/tensor_desc.h"
#include "runtime/kernels/cuda/cuda_kernel_families.h"
#include "runtime/kernels/cuda/launch_kernel.h"
#include "runtime/kernels/cuda/layout_launchers.h"

namespace softwire {
namespace runtime {
namespace {

// The part's rows as embedding_kernels.cc reads them.
cuda::EmbeddingRows ReadRows(const proto::KernelDef& def, int64_t rows, int64_t channels) {
  KernelAttributes attributes(def);
  cuda::EmbeddingRows part;
  part.rows = rows;
  part.channels = channels;
  part.first = attributes.Int("index_begin", 0);
  part.partial = attributes.Bool("partial", false);
  return part;
}

StatusOr<std::unique_ptr<Kernel>> MakeEmbedding(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  const Shape table = ShapeOf(def.input(0));
  const cuda::EmbeddingRows part = ReadRows(def, table.dim(0), table.dim(1));
  const int64_t lookups = ShapeOf(def.input(1)).NumElements();
  return MakeLaunchKernel(setup, [=](const KernelContext& context, cudaStream_t stream) {
    return cuda::EmbeddingLookup(context.inputs[0].As<float>(), context.inputs[1].As<int32_t>(),
                                 context.outputs[0].As<float>(), lookups, part, stream);
  });
}

StatusOr<std::unique_ptr<Kernel>> MakeEmbeddingGrad(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  const Shape dtable = ShapeOf(def.output(0));
  const cuda::EmbeddingRows part = ReadRows(def, dtable.dim(0), dtable.dim(1));
  const int64_t lookups = ShapeOf(def.input(1)).NumElements();
  return MakeLaunchKernel(setup, [=](const KernelContext& context, cudaStream_t stream) {
    return cuda::EmbeddingGrad(context.inputs[0].As<float>(), context.inputs[1].As<int32_t>(),
                               context.outputs[0].As<float>(), lookups, part, stream);
  });
}

}  // namespace

void RegisterCudaEmbeddingKernels(KernelRegistry* registry,
                                  const std::shared_ptr<const KernelRegistry>& cpu) {
  RegisterValidated(registry, cpu, "embedding", MakeEmbedding);
  RegisterValidated(registry, cpu, "embedding_grad", MakeEmbeddingGrad);
}

}  // namespace runtime
}  // namespace softwire
