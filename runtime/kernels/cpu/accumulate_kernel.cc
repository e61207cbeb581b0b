// accumulate: sums a per-piece value into its per-step register. The first firing of each fill
// overwrites (sum = x), later ones add (sum += x), in float32.
//
// Parallelism: flat chunks of >= kMinParallelWork elements.
#include <algorithm>
#include <memory>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

class AccumulateKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(def).Finish());
    SOFTWIRE_RETURN_IF_ERROR(
        CheckSignature(def, {"x"}, {DType::kFloat32}, {"sum"}, {DType::kFloat32}));
    Shape x = ShapeOf(def.input(0));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output sum", ShapeOf(def.output(0)), x));
    return std::unique_ptr<Kernel>(new AccumulateKernel(x.NumElements()));
  }

  Status Run(const KernelContext& context) override {
    const float* x = context.inputs[0].As<float>();
    float* sum = context.outputs[0].As<float>();
    const bool overwrite = context.output_fill_begins[0];
    ParallelFor(context.parallel, elements_, MinChunkFor(1), [&](int64_t begin, int64_t end) {
      if (overwrite) {
        std::copy(x + begin, x + end, sum + begin);
      } else {
        for (int64_t i = begin; i < end; ++i) sum[i] += x[i];
      }
    });
    return Status::Ok();
  }

 private:
  explicit AccumulateKernel(int64_t elements) : elements_(elements) {}

  const int64_t elements_;
};

}  // namespace

void RegisterAccumulateKernel(KernelRegistry* registry) {
  registry->Register("accumulate", AccumulateKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
