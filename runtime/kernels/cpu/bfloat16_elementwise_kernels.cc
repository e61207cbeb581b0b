// The bfloat16 element-wise kernels (bfloat16_elementwise_kernels.h). Flat chunks; the loops
// are branch-free (Load and Store are shifts and adds) so GCC vectorises them.
#include "runtime/kernels/cpu/bfloat16_elementwise_kernels.h"

#include <algorithm>
#include <string>
#include <vector>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/bfloat16_access.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

enum class Operation { kRelu, kReluGrad, kAdd, kAddN };

class BFloat16ElementwiseKernel final : public Kernel {
 public:
  BFloat16ElementwiseKernel(Operation operation, int64_t elements)
      : operation_(operation), elements_(elements) {}

  Status Run(const KernelContext& context) override {
    BFloat16* y = context.outputs[0].As<BFloat16>();
    const std::vector<TensorView>& inputs = context.inputs;
    const BFloat16* a = inputs[0].As<BFloat16>();
    const BFloat16* b = inputs.size() > 1 ? inputs[1].As<BFloat16>() : nullptr;
    const int64_t work = static_cast<int64_t>(inputs.size());
    ParallelFor(context.parallel, elements_, MinChunkFor(work), [&](int64_t begin, int64_t end) {
      switch (operation_) {
        case Operation::kRelu:
          for (int64_t i = begin; i < end; ++i) Store(y + i, std::max(Load(a[i]), 0.0f));
          break;
        case Operation::kReluGrad:  // (dy, y): dy where y > 0.
          for (int64_t i = begin; i < end; ++i) {
            // Both loaded unconditionally: a select, which GCC vectorises (a load in one arm
            // only kept the loop scalar, 5x slower than float32's).
            const float dy = Load(a[i]);
            const float value = Load(b[i]);
            Store(y + i, value > 0.0f ? dy : 0.0f);
          }
          break;
        case Operation::kAdd:
          for (int64_t i = begin; i < end; ++i) Store(y + i, Load(a[i]) + Load(b[i]));
          break;
        case Operation::kAddN:
          AddN(inputs, y, begin, end);
          break;
      }
    });
    return Status::Ok();
  }

 private:
  // In input order, in float32, per block of a chunk that stays in L1; rounded once.
  static void AddN(const std::vector<TensorView>& inputs, BFloat16* y, int64_t begin, int64_t end) {
    constexpr int64_t kBlock = 1024;
    float sum[kBlock];
    for (int64_t block = begin; block < end; block += kBlock) {
      const int64_t count = std::min(end, block + kBlock) - block;
      const BFloat16* x0 = inputs[0].As<BFloat16>() + block;
      for (int64_t i = 0; i < count; ++i) sum[i] = Load(x0[i]);
      for (size_t input = 1; input < inputs.size(); ++input) {
        const BFloat16* x = inputs[input].As<BFloat16>() + block;
        for (int64_t i = 0; i < count; ++i) sum[i] += Load(x[i]);
      }
      for (int64_t i = 0; i < count; ++i) Store(y + block + i, sum[i]);
    }
  }

  const Operation operation_;
  const int64_t elements_;
};

}  // namespace

bool ReadsBFloat16(const proto::KernelDef& def) {
  return def.input_size() > 0 && DTypeOf(def.input(0)) == DType::kBFloat16;
}

StatusOr<std::unique_ptr<Kernel>> CreateBFloat16ElementwiseKernel(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(def).Finish());
  const std::string& type = def.op_type();
  Operation operation;
  std::vector<std::string> names;
  if (type == "relu") {
    operation = Operation::kRelu;
    names = {"x"};
  } else if (type == "relu_grad") {
    operation = Operation::kReluGrad;
    names = {"dy", "y"};
  } else if (type == "add") {
    operation = Operation::kAdd;
    names = {"a", "b"};
  } else if (type == "add_n") {
    operation = Operation::kAddN;
    if (def.input_size() < 2) {
      return KernelDefError(def,
                            "needs two or more inputs, not " + std::to_string(def.input_size()));
    }
    for (int index = 0; index < def.input_size(); ++index) {
      names.push_back("x" + std::to_string(index));
    }
  } else {
    return KernelDefError(def, "has no bfloat16 kernel (relu, relu_grad, add and add_n have)");
  }
  const std::string output = type == "relu_grad" ? "dx" : (type == "add" ? "c" : "y");
  SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, names,
                                          std::vector<DType>(names.size(), DType::kBFloat16),
                                          {output}, {DType::kBFloat16}));
  const Shape shape = ShapeOf(def.input(0));
  for (size_t index = 1; index < names.size(); ++index) {
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "input " + names[index],
                                        ShapeOf(def.input(static_cast<int>(index))), shape));
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output " + output, ShapeOf(def.output(0)), shape));
  return std::unique_ptr<Kernel>(new BFloat16ElementwiseKernel(operation, shape.NumElements()));
}

}  // namespace runtime
}  // namespace softwire
