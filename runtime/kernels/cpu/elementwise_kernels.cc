// scale, identity, reshape, fill and add_n: same-shape elementwise kernels (reshape is a copy
// into a differently shaped register).
//
// Parallelism: flat chunks of >= kMinParallelWork elements. Vectorisation: plain loops over
// contiguous floats. add_n sums its inputs in input order per element (docs/OPS.md), walking
// the chunk once per input in blocks that stay in L1.
#include <algorithm>
#include <cstring>
#include <memory>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/bfloat16_elementwise_kernels.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

// Checks one float32 input and one float32 output of the same shape.
Status CheckUnarySignature(const proto::KernelDef& def) {
  SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"x"}, {DType::kFloat32}, {"y"}, {DType::kFloat32}));
  return CheckShape(def, "output y", ShapeOf(def.output(0)), ShapeOf(def.input(0)));
}

class ScaleKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    KernelAttributes attributes(def);
    double factor = attributes.RequiredFloat("factor");
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    SOFTWIRE_RETURN_IF_ERROR(CheckUnarySignature(def));
    return std::unique_ptr<Kernel>(
        new ScaleKernel(static_cast<float>(factor), ShapeOf(def.input(0)).NumElements()));
  }

  Status Run(const KernelContext& context) override {
    const float* x = context.inputs[0].As<float>();
    float* y = context.outputs[0].As<float>();
    ParallelFor(context.parallel, elements_, MinChunkFor(1), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = factor_ * x[i];
    });
    return Status::Ok();
  }

 private:
  ScaleKernel(float factor, int64_t elements) : factor_(factor), elements_(elements) {}

  const float factor_;
  const int64_t elements_;
};

// y = x. Also serves reshape, whose output differs from its input only in its shape.
class CopyKernel final : public Kernel {
 public:
  explicit CopyKernel(int64_t bytes) : bytes_(bytes) {}

  Status Run(const KernelContext& context) override {
    const char* x = static_cast<const char*>(context.inputs[0].data);
    char* y = static_cast<char*>(context.outputs[0].data);
    ParallelFor(context.parallel, bytes_, MinChunkFor(1) * 4, [&](int64_t begin, int64_t end) {
      std::memcpy(y + begin, x + begin, static_cast<size_t>(end - begin));
    });
    return Status::Ok();
  }

 private:
  const int64_t bytes_;
};

StatusOr<std::unique_ptr<Kernel>> CreateIdentityKernel(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(def).Finish());
  if (def.input_size() != 1 || def.output_size() != 1) {
    return KernelDefError(def, "expects one input and one output");
  }
  DType dtype = DTypeOf(def.input(0));
  SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"x"}, {dtype}, {"y"}, {dtype}));
  if (dtype == DType::kInvalid) return KernelDefError(def, "input x has no valid dtype");
  Shape x = ShapeOf(def.input(0));
  SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), x));
  return std::unique_ptr<Kernel>(new CopyKernel(x.NumElements() * SizeOf(dtype)));
}

// Reads reshape's `shape` (at most one -1, inferred) and checks it against x and y.
StatusOr<std::unique_ptr<Kernel>> CreateReshapeKernel(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  KernelAttributes attributes(def);
  std::vector<int64_t> dims = attributes.RequiredInts("shape");
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  if (def.input_size() != 1 || def.output_size() != 1) {
    return KernelDefError(def, "expects one input and one output");
  }
  DType dtype = DTypeOf(def.input(0));
  if (dtype == DType::kInvalid) return KernelDefError(def, "input x has no valid dtype");
  SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"x"}, {dtype}, {"y"}, {dtype}));
  Shape x = ShapeOf(def.input(0));
  int inferred_axis = -1;
  int64_t known_elements = 1;
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    if (dims[axis] == -1 && inferred_axis < 0) {
      inferred_axis = static_cast<int>(axis);
    } else if (dims[axis] < 0) {
      return KernelDefError(
          def, "shape " + Shape(dims).ToString() + " may hold one -1 and no other negative extent");
    } else {
      known_elements *= dims[axis];
    }
  }
  if (inferred_axis >= 0) {
    if (known_elements == 0 || x.NumElements() % known_elements != 0) {
      return KernelDefError(
          def, "cannot infer the -1 in " + Shape(dims).ToString() + " from " + x.ToString());
    }
    dims[inferred_axis] = x.NumElements() / known_elements;
  }
  if (Shape(dims).NumElements() != x.NumElements()) {
    return KernelDefError(def, "shape " + Shape(dims).ToString() + " does not hold the " +
                                   std::to_string(x.NumElements()) + " elements of " +
                                   x.ToString());
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), Shape(dims)));
  return std::unique_ptr<Kernel>(new CopyKernel(x.NumElements() * SizeOf(dtype)));
}

class FillKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    KernelAttributes attributes(def);
    Shape shape(attributes.RequiredInts("shape"));
    double value = attributes.RequiredFloat("value");
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {}, {}, {"y"}, {DType::kFloat32}));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), shape));
    return std::unique_ptr<Kernel>(new FillKernel(static_cast<float>(value), shape.NumElements()));
  }

  Status Run(const KernelContext& context) override {
    float* y = context.outputs[0].As<float>();
    ParallelFor(context.parallel, elements_, MinChunkFor(1),
                [&](int64_t begin, int64_t end) { std::fill(y + begin, y + end, value_); });
    return Status::Ok();
  }

 private:
  FillKernel(float value, int64_t elements) : value_(value), elements_(elements) {}

  const float value_;
  const int64_t elements_;
};

class AddNKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(def).Finish());
    if (def.input_size() < 2) {
      return KernelDefError(def,
                            "needs two or more inputs, not " + std::to_string(def.input_size()));
    }
    std::vector<std::string> names;
    for (int index = 0; index < def.input_size(); ++index) {
      names.push_back("x" + std::to_string(index));
    }
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(
        def, names, std::vector<DType>(names.size(), DType::kFloat32), {"y"}, {DType::kFloat32}));
    Shape y = ShapeOf(def.input(0));
    for (int index = 1; index < def.input_size(); ++index) {
      SOFTWIRE_RETURN_IF_ERROR(
          CheckShape(def, "input " + names[index], ShapeOf(def.input(index)), y));
    }
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), y));
    return std::unique_ptr<Kernel>(new AddNKernel(y.NumElements()));
  }

  Status Run(const KernelContext& context) override {
    float* y = context.outputs[0].As<float>();
    const std::vector<TensorView>& inputs = context.inputs;
    // 2048 floats per input stay in L1 while every input is added to them.
    constexpr int64_t kBlock = 2048;
    ParallelFor(context.parallel, elements_, MinChunkFor(static_cast<int64_t>(inputs.size())),
                [&](int64_t begin, int64_t end) {
                  for (int64_t block = begin; block < end; block += kBlock) {
                    const int64_t block_end = std::min(end, block + kBlock);
                    const float* x0 = static_cast<const float*>(inputs[0].data);
                    const float* x1 = static_cast<const float*>(inputs[1].data);
                    for (int64_t i = block; i < block_end; ++i) y[i] = x0[i] + x1[i];
                    for (size_t input = 2; input < inputs.size(); ++input) {
                      const float* x = static_cast<const float*>(inputs[input].data);
                      for (int64_t i = block; i < block_end; ++i) y[i] += x[i];
                    }
                  }
                });
    return Status::Ok();
  }

 private:
  explicit AddNKernel(int64_t elements) : elements_(elements) {}

  const int64_t elements_;
};

}  // namespace

void RegisterElementwiseKernels(KernelRegistry* registry) {
  registry->Register("scale", ScaleKernel::Create);
  registry->Register("identity", CreateIdentityKernel);
  registry->Register("reshape", CreateReshapeKernel);
  registry->Register("fill", FillKernel::Create);
  registry->Register("add_n", [](const KernelSetup& setup) {
    return ReadsBFloat16(setup.actor->kernel()) ? CreateBFloat16ElementwiseKernel(setup)
                                                : AddNKernel::Create(setup);
  });
}

}  // namespace runtime
}  // namespace softwire
