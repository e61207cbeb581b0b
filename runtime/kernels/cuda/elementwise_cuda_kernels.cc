// The cuda kernels of element-wise ops: fill, scale, add_n, identity, reshape, copy, relu,
// gelu and their gradients, bias_add, bias_add_grad, add, sub, mul, broadcast_axes, accumulate,
// sgd_update and adam_update. Every KernelDef was checked by its cpu kernel first (cuda_kernels.h);
// the makers here read only the numbers the launches need.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "proto/kernel_attributes.h"
#include "proto/tensor_desc.h"
#include "runtime/kernels/cuda/cuda_kernel_families.h"
#include "runtime/kernels/cuda/cuda_launchers.h"
#include "runtime/kernels/cuda/launch_kernel.h"

namespace softwire {
namespace runtime {
namespace {

const float* In(const KernelContext& context, int index) {
  return context.inputs[static_cast<size_t>(index)].As<float>();
}
float* Out(const KernelContext& context, int index) {
  return context.outputs[static_cast<size_t>(index)].As<float>();
}

int64_t Elements(const proto::TensorDesc& desc) {
  return ShapeOf(desc).NumElements();
}

StatusOr<std::unique_ptr<Kernel>> MakeFill(const KernelSetup& setup) {
  KernelAttributes attributes(setup.actor->kernel());
  const float value = static_cast<float>(attributes.RequiredFloat("value"));
  const int64_t n = Elements(setup.actor->kernel().output(0));
  return MakeLaunchKernel(setup, [value, n](const KernelContext& context, cudaStream_t stream) {
    return cuda::Fill(Out(context, 0), value, n, stream);
  });
}

StatusOr<std::unique_ptr<Kernel>> MakeScale(const KernelSetup& setup) {
  KernelAttributes attributes(setup.actor->kernel());
  const float factor = static_cast<float>(attributes.RequiredFloat("factor"));
  const int64_t n = Elements(setup.actor->kernel().input(0));
  return MakeLaunchKernel(setup, [factor, n](const KernelContext& context, cudaStream_t stream) {
    return cuda::Scale(In(context, 0), Out(context, 0), factor, n, stream);
  });
}

// y = x0 + x1 + ..., in input order, kMaxSummands inputs per launch.
StatusOr<std::unique_ptr<Kernel>> MakeAddN(const KernelSetup& setup) {
  const int64_t n = Elements(setup.actor->kernel().output(0));
  return MakeLaunchKernel(setup, [n](const KernelContext& context, cudaStream_t stream) {
    const int inputs = static_cast<int>(context.inputs.size());
    for (int first = 0; first < inputs; first += cuda::kMaxSummands) {
      cuda::Summands summands;
      summands.count = std::min(cuda::kMaxSummands, inputs - first);
      for (int k = 0; k < summands.count; ++k) summands.x[k] = In(context, first + k);
      const cudaError_t error = cuda::AddN(summands, first > 0, Out(context, 0), n, stream);
      if (error != cudaSuccess) return error;
    }
    return cudaSuccess;
  });
}

// identity, reshape and copy: the output's bytes are the input's (cudaMemcpyDefault: a copy
// actor's input may lie in another device's memory or in host memory).
StatusOr<std::unique_ptr<Kernel>> MakeByteCopy(const KernelSetup& setup) {
  const proto::TensorDesc& y = setup.actor->kernel().output(0);
  const size_t bytes = static_cast<size_t>(Elements(y) * SizeOf(DTypeOf(y)));
  return MakeLaunchKernel(setup, [bytes](const KernelContext& context, cudaStream_t stream) {
    return cudaMemcpyAsync(context.outputs[0].data, context.inputs[0].data, bytes,
                           cudaMemcpyDefault, stream);
  });
}

CudaKernelMaker MakeActivation(cuda::Activation activation) {
  return [activation](const KernelSetup& setup) {
    const int64_t n = Elements(setup.actor->kernel().input(0));
    return MakeLaunchKernel(
        setup, [activation, n](const KernelContext& context, cudaStream_t stream) {
          return cuda::ActivationForward(activation, In(context, 0), Out(context, 0), n, stream);
        });
  };
}

CudaKernelMaker MakeActivationGrad(cuda::Activation activation) {
  return [activation](const KernelSetup& setup) {
    const int64_t n = Elements(setup.actor->kernel().input(0));
    return MakeLaunchKernel(
        setup, [activation, n](const KernelContext& context, cudaStream_t stream) {
          return cuda::ActivationBackward(activation, In(context, 0), In(context, 1),
                                          Out(context, 0), n, stream);
        });
  };
}

StatusOr<std::unique_ptr<Kernel>> MakeBiasAdd(const KernelSetup& setup) {
  const Shape x = ShapeOf(setup.actor->kernel().input(0));
  const int64_t channels = x.dim(-1);
  const int64_t rows = x.NumElements(0, x.rank() - 1);
  return MakeLaunchKernel(setup, [rows, channels](const KernelContext& context,
                                                  cudaStream_t stream) {
    return cuda::BiasAdd(In(context, 0), In(context, 1), Out(context, 0), rows, channels, stream);
  });
}

StatusOr<std::unique_ptr<Kernel>> MakeBiasAddGrad(const KernelSetup& setup) {
  const Shape dy = ShapeOf(setup.actor->kernel().input(0));
  const int64_t channels = dy.dim(-1);
  const int64_t rows = dy.NumElements(0, dy.rank() - 1);
  return MakeLaunchKernel(
      setup, [rows, channels](const KernelContext& context, cudaStream_t stream) {
        return cuda::BiasAddGrad(In(context, 0), Out(context, 0), rows, channels, stream);
      });
}

// a's or b's element strides along c's axes: NumPy broadcasting aligns trailing axes, and an
// axis of extent 1 (or missing) is read with stride 0.
void OperandStrides(const Shape& operand, const Shape& c, int64_t* strides) {
  int64_t stride = 1;
  for (int axis = c.rank() - 1; axis >= 0; --axis) {
    const int operand_axis = axis - (c.rank() - operand.rank());
    if (operand_axis < 0) {
      strides[axis] = 0;
      continue;
    }
    const int64_t extent = operand.dim(operand_axis);
    strides[axis] = extent == 1 ? 0 : stride;
    stride *= extent;
  }
}

CudaKernelMaker MakeBinary(cuda::BinaryOp op) {
  return [op](const KernelSetup& setup) -> StatusOr<std::unique_ptr<Kernel>> {
    const proto::KernelDef& def = setup.actor->kernel();
    const Shape a = ShapeOf(def.input(0));
    const Shape b = ShapeOf(def.input(1));
    const Shape c = ShapeOf(def.output(0));
    if (c.rank() > cuda::kMaxRank) {
      return UnimplementedError(def.op_type() + ": cuda kernels broadcast up to rank " +
                                std::to_string(cuda::kMaxRank) + ", not " + c.ToString());
    }
    cuda::BroadcastIndex index;
    index.rank = c.rank();
    for (int axis = 0; axis < c.rank(); ++axis) index.dims[axis] = c.dim(axis);
    OperandStrides(a, c, index.a_strides);
    OperandStrides(b, c, index.b_strides);
    const int64_t n = c.NumElements();
    return MakeLaunchKernel(setup, [op, index, n](const KernelContext& context,
                                                  cudaStream_t stream) {
      return cuda::Broadcast(op, In(context, 0), In(context, 1), Out(context, 0), index, n, stream);
    });
  };
}

// y (shape `shape`) = x repeated along `axes` (broadcast_kernels.cc): x read as y's shape with
// those axes at extent 1.
StatusOr<std::unique_ptr<Kernel>> MakeBroadcastAxes(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  KernelAttributes attributes(def);
  const Shape y(attributes.RequiredInts("shape"));
  const std::vector<int64_t> axes = attributes.RequiredInts("axes");
  if (y.rank() > cuda::kMaxRank) {
    return UnimplementedError(def.op_type() + ": cuda kernels broadcast up to rank " +
                              std::to_string(cuda::kMaxRank) + ", not " + y.ToString());
  }
  std::vector<int64_t> unit_dims = y.dims();
  for (int64_t axis : axes) unit_dims[static_cast<size_t>(y.NormalizeAxis(axis))] = 1;
  cuda::BroadcastIndex index;
  index.rank = y.rank();
  for (int axis = 0; axis < y.rank(); ++axis) index.dims[axis] = y.dim(axis);
  OperandStrides(Shape(unit_dims), y, index.a_strides);
  const int64_t n = y.NumElements();
  return MakeLaunchKernel(setup, [index, n](const KernelContext& context, cudaStream_t stream) {
    return cuda::Broadcast(cuda::BinaryOp::kFirst, In(context, 0), In(context, 0), Out(context, 0),
                           index, n, stream);
  });
}

// The first firing of a fill overwrites the sum, later ones add (accumulate_kernel.cc).
StatusOr<std::unique_ptr<Kernel>> MakeAccumulate(const KernelSetup& setup) {
  const int64_t n = Elements(setup.actor->kernel().input(0));
  return MakeLaunchKernel(setup, [n](const KernelContext& context, cudaStream_t stream) {
    if (context.output_fill_begins[0]) {
      return cudaMemcpyAsync(Out(context, 0), In(context, 0),
                             sizeof(float) * static_cast<size_t>(n), cudaMemcpyDeviceToDevice,
                             stream);
    }
    cuda::Summands summands;
    summands.count = 1;
    summands.x[0] = In(context, 0);
    return cuda::AddN(summands, true, Out(context, 0), n, stream);
  });
}

StatusOr<std::unique_ptr<Kernel>> MakeSgdUpdate(const KernelSetup& setup) {
  KernelAttributes attributes(setup.actor->kernel());
  cuda::SgdSettings settings;
  settings.learning_rate = static_cast<float>(attributes.RequiredFloat("learning_rate"));
  settings.momentum = static_cast<float>(attributes.Float("momentum", 0.0));
  settings.weight_decay = static_cast<float>(attributes.Float("weight_decay", 0.0));
  settings.gradient_scale = static_cast<float>(attributes.Float("gradient_scale", 1.0));
  const int64_t n = Elements(setup.actor->kernel().input(1));
  return MakeLaunchKernel(setup, [settings, n](const KernelContext& context, cudaStream_t stream) {
    return cuda::SgdUpdate(In(context, 0), context.inputs[1].As<float>(),
                           static_cast<float*>(context.state), n, settings, stream);
  });
}

StatusOr<std::unique_ptr<Kernel>> MakeAdamUpdate(const KernelSetup& setup) {
  KernelAttributes attributes(setup.actor->kernel());
  const double learning_rate = attributes.RequiredFloat("learning_rate");
  const double beta1 = attributes.Float("beta1", 0.9);
  const double beta2 = attributes.Float("beta2", 0.999);
  const double epsilon = attributes.Float("epsilon", 1e-8);
  const double weight_decay = attributes.Float("weight_decay", 0.0);
  const double gradient_scale = attributes.Float("gradient_scale", 1.0);
  const int64_t n = Elements(setup.actor->kernel().input(1));
  return MakeLaunchKernel(setup, [=](const KernelContext& context, cudaStream_t stream) {
    // The step's constants as optimizer_kernels.cc computes them (step t = firing + 1).
    const double t = static_cast<double>(context.firing + 1);
    cuda::AdamConstants c;
    c.learning_rate = static_cast<float>(learning_rate);
    c.beta1 = static_cast<float>(beta1);
    c.beta2 = static_cast<float>(beta2);
    c.one_minus_beta1 = static_cast<float>(1.0 - beta1);
    c.one_minus_beta2 = static_cast<float>(1.0 - beta2);
    c.inverse_correction1 = static_cast<float>(1.0 / (1.0 - std::pow(beta1, t)));
    c.inverse_correction2 = static_cast<float>(1.0 / (1.0 - std::pow(beta2, t)));
    c.epsilon = static_cast<float>(epsilon);
    c.weight_decay = static_cast<float>(weight_decay);
    c.gradient_scale = static_cast<float>(gradient_scale);
    float* m = static_cast<float*>(context.state);
    return cuda::AdamUpdate(In(context, 0), context.inputs[1].As<float>(), m, m + n, n, c, stream);
  });
}

}  // namespace

void RegisterCudaElementwiseKernels(KernelRegistry* registry,
                                    const std::shared_ptr<const KernelRegistry>& cpu) {
  RegisterValidated(registry, cpu, "fill", MakeFill);
  RegisterValidated(registry, cpu, "scale", MakeScale);
  RegisterValidated(registry, cpu, "add_n", MakeAddN);
  RegisterValidated(registry, cpu, "identity", MakeByteCopy);
  RegisterValidated(registry, cpu, "reshape", MakeByteCopy);
  RegisterValidated(registry, cpu, "copy", MakeByteCopy);
  RegisterValidated(registry, cpu, "relu", MakeActivation(cuda::Activation::kRelu));
  RegisterValidated(registry, cpu, "gelu", MakeActivation(cuda::Activation::kGelu));
  RegisterValidated(registry, cpu, "relu_grad", MakeActivationGrad(cuda::Activation::kRelu));
  RegisterValidated(registry, cpu, "gelu_grad", MakeActivationGrad(cuda::Activation::kGelu));
  RegisterValidated(registry, cpu, "bias_add", MakeBiasAdd);
  RegisterValidated(registry, cpu, "bias_add_grad", MakeBiasAddGrad);
  RegisterValidated(registry, cpu, "add", MakeBinary(cuda::BinaryOp::kAdd));
  RegisterValidated(registry, cpu, "sub", MakeBinary(cuda::BinaryOp::kSub));
  RegisterValidated(registry, cpu, "mul", MakeBinary(cuda::BinaryOp::kMul));
  RegisterValidated(registry, cpu, "broadcast_axes", MakeBroadcastAxes);
  RegisterValidated(registry, cpu, "accumulate", MakeAccumulate);
  RegisterValidated(registry, cpu, "sgd_update", MakeSgdUpdate);
  RegisterValidated(registry, cpu, "adam_update", MakeAdamUpdate);
}

}  // namespace runtime
}  // namespace softwire
