// The cuda kernels of row-wise ops and reductions: softmax, softmax_grad,
// softmax_cross_entropy, softmax_cross_entropy_grad, accuracy, layer_norm, layer_norm_grad,
// reduce_sum, reduce_mean and sum_to_shape. Every KernelDef was checked by its cpu kernel first
// (cuda_kernels.h).
#include <memory>
#include <vector>

#include "proto/kernel_attributes.h"
#include "proto/tensor_desc.h"
#include "runtime/kernels/cuda/cuda_kernel_families.h"
#include "runtime/kernels/cuda/cuda_launchers.h"
#include "runtime/kernels/cuda/launch_kernel.h"
#include "runtime/kernels/cuda/row_launchers.h"

namespace softwire {
namespace runtime {
namespace {

const float* In(const KernelContext& context, int index) {
  return context.inputs[static_cast<size_t>(index)].As<float>();
}
float* Out(const KernelContext& context) {
  return context.outputs[0].As<float>();
}

// Rows and length of x [..., L].
void RowsOf(const Shape& x, int64_t* rows, int64_t* length) {
  *length = x.dim(-1);
  *rows = x.NumElements(0, x.rank() - 1);
}

StatusOr<std::unique_ptr<Kernel>> MakeSoftmax(const KernelSetup& setup) {
  KernelAttributes attributes(setup.actor->kernel());
  const bool causal = attributes.Bool("causal", false);
  int64_t rows = 0;
  int64_t length = 0;
  RowsOf(ShapeOf(setup.actor->kernel().input(0)), &rows, &length);
  return MakeLaunchKernel(setup, [=](const KernelContext& context, cudaStream_t stream) {
    return cuda::Softmax(In(context, 0), Out(context), rows, length, causal, stream);
  });
}

StatusOr<std::unique_ptr<Kernel>> MakeSoftmaxGrad(const KernelSetup& setup) {
  int64_t rows = 0;
  int64_t length = 0;
  RowsOf(ShapeOf(setup.actor->kernel().input(0)), &rows, &length);
  return MakeLaunchKernel(setup, [=](const KernelContext& context, cudaStream_t stream) {
    return cuda::SoftmaxGrad(In(context, 0), In(context, 1), Out(context), rows, length, stream);
  });
}

StatusOr<std::unique_ptr<Kernel>> MakeCrossEntropy(const KernelSetup& setup) {
  int64_t rows = 0;
  int64_t classes = 0;
  RowsOf(ShapeOf(setup.actor->kernel().input(0)), &rows, &classes);
  return MakeLaunchKernel(setup, [=](const KernelContext& context, cudaStream_t stream) {
    return cuda::SoftmaxCrossEntropy(In(context, 0), context.inputs[1].As<int32_t>(), Out(context),
                                     rows, classes, stream);
  });
}

StatusOr<std::unique_ptr<Kernel>> MakeCrossEntropyGrad(const KernelSetup& setup) {
  int64_t rows = 0;
  int64_t classes = 0;
  RowsOf(ShapeOf(setup.actor->kernel().input(1)), &rows, &classes);
  return MakeLaunchKernel(setup, [=](const KernelContext& context, cudaStream_t stream) {
    return cuda::SoftmaxCrossEntropyGrad(In(context, 0), In(context, 1),
                                         context.inputs[2].As<int32_t>(), Out(context), rows,
                                         classes, stream);
  });
}

// Sums x over the axes `reduced` marks, times `scale`: the kernel of reduce_sum, reduce_mean and
// sum_to_shape.
StatusOr<std::unique_ptr<Kernel>> MakeReduction(const KernelSetup& setup,
                                                const std::vector<bool>& reduced, bool mean,
                                                int64_t divisor) {
  const proto::KernelDef& def = setup.actor->kernel();
  const Shape x = ShapeOf(def.input(0));
  if (x.rank() > cuda::kMaxRank) {
    return UnimplementedError(def.op_type() + ": cuda kernels reduce up to rank " +
                              std::to_string(cuda::kMaxRank) + ", not " + x.ToString());
  }
  std::vector<int64_t> strides(static_cast<size_t>(x.rank()), 1);
  for (int axis = x.rank() - 2; axis >= 0; --axis) {
    strides[axis] = strides[axis + 1] * x.dim(axis + 1);
  }
  cuda::ReductionIndex index;
  int64_t outputs = 1;
  for (int axis = 0; axis < x.rank(); ++axis) {
    if (reduced[static_cast<size_t>(axis)]) {
      index.reduced_dims[index.reduced_rank] = x.dim(axis);
      index.reduced_strides[index.reduced_rank++] = strides[axis];
      index.reduced_count *= x.dim(axis);
    } else {
      index.kept_dims[index.kept_rank] = x.dim(axis);
      index.kept_strides[index.kept_rank++] = strides[axis];
      outputs *= x.dim(axis);
    }
  }
  const int64_t count = divisor > 0 ? divisor : index.reduced_count;
  const float scale = mean ? 1.0f / static_cast<float>(count) : 1.0f;
  return MakeLaunchKernel(setup, [=](const KernelContext& context, cudaStream_t stream) {
    return cuda::Reduce(In(context, 0), Out(context), index, outputs, scale, stream);
  });
}

// reduce_sum (mean = false) and reduce_mean: the axes and divisor as reduction_kernels.cc reads
// them.
CudaKernelMaker MakeReduce(bool mean) {
  return [mean](const KernelSetup& setup) -> StatusOr<std::unique_ptr<Kernel>> {
    const proto::KernelDef& def = setup.actor->kernel();
    KernelAttributes attributes(def);
    const std::vector<int64_t> axes = attributes.Ints("axes", {});
    const int64_t divisor = mean ? attributes.Int("divisor", 0) : 0;
    const Shape x = ShapeOf(def.input(0));
    std::vector<bool> reduced(static_cast<size_t>(x.rank()), axes.empty());
    for (int64_t axis : axes) reduced[static_cast<size_t>(x.NormalizeAxis(axis))] = true;
    return MakeReduction(setup, reduced, mean, divisor);
  };
}

// sum_to_shape: x summed over its leading axes beyond `shape`'s rank and where `shape` has 1.
StatusOr<std::unique_ptr<Kernel>> MakeSumToShape(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  const Shape y(KernelAttributes(def).RequiredInts("shape"));
  const Shape x = ShapeOf(def.input(0));
  const int leading = x.rank() - y.rank();
  std::vector<bool> reduced(static_cast<size_t>(x.rank()));
  for (int axis = 0; axis < x.rank(); ++axis) {
    reduced[static_cast<size_t>(axis)] = axis < leading || y.dim(axis - leading) != x.dim(axis);
  }
  return MakeReduction(setup, reduced, /*mean=*/false, 0);
}

StatusOr<std::unique_ptr<Kernel>> MakeAccuracy(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  int64_t rows = 0;
  int64_t classes = 0;
  RowsOf(ShapeOf(def.input(0)), &rows, &classes);
  const int64_t attribute = KernelAttributes(def).Int("divisor", 0);
  const int64_t divisor = attribute > 0 ? attribute : rows;
  return MakeLaunchKernel(setup, [=](const KernelContext& context, cudaStream_t stream) {
    return cuda::Accuracy(In(context, 0), context.inputs[1].As<int32_t>(), Out(context), rows,
                          classes, divisor, stream);
  });
}

float EpsilonOf(const proto::KernelDef& def) {
  return static_cast<float>(KernelAttributes(def).Float("epsilon", 1e-5));
}

StatusOr<std::unique_ptr<Kernel>> MakeLayerNorm(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  const float epsilon = EpsilonOf(def);
  int64_t rows = 0;
  int64_t channels = 0;
  RowsOf(ShapeOf(def.input(0)), &rows, &channels);
  return MakeLaunchKernel(setup, [=](const KernelContext& context, cudaStream_t stream) {
    return cuda::LayerNorm(In(context, 0), In(context, 1), In(context, 2), Out(context), rows,
                           channels, epsilon, stream);
  });
}

StatusOr<std::unique_ptr<Kernel>> MakeLayerNormGrad(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  const float epsilon = EpsilonOf(def);
  int64_t rows = 0;
  int64_t channels = 0;
  RowsOf(ShapeOf(def.input(1)), &rows, &channels);
  return MakeLaunchKernel(setup, [=](const KernelContext& context, cudaStream_t stream) {
    return cuda::LayerNormGrad(In(context, 0), In(context, 1), In(context, 2),
                               context.outputs[0].As<float>(), context.outputs[1].As<float>(),
                               context.outputs[2].As<float>(), rows, channels, epsilon, stream);
  });
}

}  // namespace

void RegisterCudaRowKernels(KernelRegistry* registry,
                            const std::shared_ptr<const KernelRegistry>& cpu) {
  RegisterValidated(registry, cpu, "softmax", MakeSoftmax);
  RegisterValidated(registry, cpu, "softmax_grad", MakeSoftmaxGrad);
  RegisterValidated(registry, cpu, "softmax_cross_entropy", MakeCrossEntropy);
  RegisterValidated(registry, cpu, "softmax_cross_entropy_grad", MakeCrossEntropyGrad);
  RegisterValidated(registry, cpu, "reduce_sum", MakeReduce(false));
  RegisterValidated(registry, cpu, "reduce_mean", MakeReduce(true));
  RegisterValidated(registry, cpu, "sum_to_shape", MakeSumToShape);
  RegisterValidated(registry, cpu, "accuracy", MakeAccuracy);
  RegisterValidated(registry, cpu, "layer_norm", MakeLayerNorm);
  RegisterValidated(registry, cpu, "layer_norm_grad", MakeLayerNormGrad);
}

}  // namespace runtime
}  // namespace softwire
