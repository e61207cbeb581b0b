#include "runtime/device/sim/sim_kernels.h"

#include <limits>
#include <string>

namespace softwire {
namespace runtime {
namespace {

class NothingKernel final : public Kernel {
 public:
  Status Run(const KernelContext&) override { return Status::Ok(); }
};

class SimSinkKernel final : public Kernel {
 public:
  SimSinkKernel(std::string output, OutputReporter* reporter)
      : output_(std::move(output)), reporter_(reporter) {}

  Status Run(const KernelContext& context) override {
    reporter_->Report(output_, context.first_piece, std::numeric_limits<double>::quiet_NaN());
    return Status::Ok();
  }

 private:
  const std::string output_;
  OutputReporter* const reporter_;
};

}  // namespace

StatusOr<std::unique_ptr<Kernel>> CreateSimKernel(const KernelSetup& setup) {
  if (setup.actor->kind() != proto::ACTOR_KIND_SINK)
    return std::unique_ptr<Kernel>(new NothingKernel);
  if (setup.reporter == nullptr || setup.actor->sink().output().empty()) {
    return InvalidArgumentError("sink on a sim device: needs a reporter and an output name");
  }
  return std::unique_ptr<Kernel>(new SimSinkKernel(setup.actor->sink().output(), setup.reporter));
}

}  // namespace runtime
}  // namespace softwire
