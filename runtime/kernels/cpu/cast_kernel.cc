// cast (docs/OPS.md): float32 <-> bfloat16, the conversions of the precision policy
// (docs/PRECISION.md). float32 -> bfloat16 rounds to nearest, ties to even (base/bfloat16.h,
// through bf16_arrays.h's loops, AVX-512 where the cpu has it); bfloat16 -> float32 is exact. A
// cast to the same type copies. Parallel over the flat range.
//
// `first_firing_only: true` (the compiler's fold_weight_casts, docs/PRECISION.md): the cast of a
// variable whose optimizer update writes the copy in place after every step. The kernel casts
// on the first firing this kernel runs (the run's first step, or the first after a resume,
// which restores only the float32 variable) and later firings write nothing: the register
// holds what the update wrote.
#include <cstring>
#include <memory>

#include "base/bfloat16.h"
#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/bf16_arrays.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

bool IsFloatingPoint(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kBFloat16;
}

class CastKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    KernelAttributes attributes(def);
    const std::string name = attributes.RequiredString("dtype");
    const bool first_firing_only = attributes.Bool("first_firing_only", false);
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    StatusOr<DType> to = ParseDType(name);
    if (!to.ok() || !IsFloatingPoint(*to)) {
      return KernelDefError(def, "dtype must be float32 or bfloat16, not '" + name + "'");
    }
    if (def.input_size() != 1 || def.output_size() != 1) {
      return KernelDefError(def, "expects one input and one output");
    }
    const DType from = DTypeOf(def.input(0));
    if (!IsFloatingPoint(from)) return KernelDefError(def, "input x must be float32 or bfloat16");
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"x"}, {from}, {"y"}, {*to}));
    const Shape x = ShapeOf(def.input(0));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), x));
    if (first_firing_only && (from != DType::kFloat32 || *to != DType::kBFloat16)) {
      return KernelDefError(def, "first_firing_only casts a float32 variable to bfloat16 only");
    }
    return std::unique_ptr<Kernel>(new CastKernel(from, *to, x.NumElements(), first_firing_only));
  }

  Status Run(const KernelContext& context) override {
    if (first_firing_only_ && cast_once_) return Status::Ok();  // The update wrote the copy.
    cast_once_ = true;
    const void* x = context.inputs[0].data;
    void* y = context.outputs[0].data;
    ParallelFor(context.parallel, elements_, MinChunkFor(1), [&](int64_t begin, int64_t end) {
      if (from_ == DType::kFloat32 && to_ == DType::kBFloat16) {
        ToBFloat16(static_cast<const float*>(x) + begin, static_cast<BFloat16*>(y) + begin,
                   end - begin);
      } else if (from_ == DType::kBFloat16 && to_ == DType::kFloat32) {
        ToFloat(static_cast<const BFloat16*>(x) + begin, static_cast<float*>(y) + begin,
                end - begin);
      } else {
        const int64_t size = SizeOf(from_);
        std::memcpy(static_cast<char*>(y) + begin * size,
                    static_cast<const char*>(x) + begin * size,
                    static_cast<size_t>(end - begin) * size);
      }
    });
    return Status::Ok();
  }

 private:
  CastKernel(DType from, DType to, int64_t elements, bool first_firing_only)
      : from_(from), to_(to), elements_(elements), first_firing_only_(first_firing_only) {}

  static void ToBFloat16(const float* x, BFloat16* y, int64_t count) {
    ConvertToBFloat16(x, y, count);
  }
  static void ToFloat(const BFloat16* x, float* y, int64_t count) {
    for (int64_t i = 0; i < count; ++i) y[i] = softwire::ToFloat(x[i]);
  }

  const DType from_;
  const DType to_;
  const int64_t elements_;
  const bool first_firing_only_;
  bool cast_once_ = false;  // Touched only by the actor's firings, which run one at a time.
};

}  // namespace

void RegisterCastKernel(KernelRegistry* registry) {
  registry->Register("cast", CastKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
