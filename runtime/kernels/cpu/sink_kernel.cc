// sink: reads a float32 scalar and reports (output name, piece, value) to the runtime's
// OutputReporter.
#include <memory>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"

namespace softwire {
namespace runtime {
namespace {

class SinkKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(def).Finish());
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"value"}, {DType::kFloat32}, {}, {}));
    Shape value = ShapeOf(def.input(0));
    if (value.NumElements() != 1) {
      return KernelDefError(def, "value must be a scalar, not " + value.ToString());
    }
    if (setup.reporter == nullptr) return KernelDefError(def, "needs an output reporter");
    if (setup.actor->sink().output().empty()) {
      return KernelDefError(def, "the actor's SinkActorDef names no output");
    }
    return std::unique_ptr<Kernel>(new SinkKernel(setup.actor->sink().output(), setup.reporter));
  }

  Status Run(const KernelContext& context) override {
    const float value = context.inputs[0].As<float>()[0];
    reporter_->Report(output_, context.first_piece, static_cast<double>(value));
    return Status::Ok();
  }

 private:
  SinkKernel(std::string output, OutputReporter* reporter)
      : output_(std::move(output)), reporter_(reporter) {}

  const std::string output_;
  OutputReporter* const reporter_;
};

}  // namespace

void RegisterSinkKernel(KernelRegistry* registry) {
  registry->Register("sink", SinkKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
