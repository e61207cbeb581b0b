// source: fills a source actor's outputs with one piece's slice of its dataset (data/). The
// dataset is opened once, when the kernel is created; Fill is const and thread-safe.
#include <memory>

#include "data/dataset.h"
#include "runtime/kernels/cpu/attribute_reader.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"

namespace softwire {
namespace runtime {
namespace {

class SourceKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(AttributeReader(def).Finish());
    if (setup.plan == nullptr) return KernelDefError(def, "needs the plan (job directory)");
    const proto::SourceActorDef& source = setup.actor->source();
    const int64_t samples = source.sample_end() - source.sample_begin();
    if (source.sample_begin() < 0 || samples < 0 ||
        source.sample_end() > setup.plan->schedule().micro_batch_size()) {
      return KernelDefError(def, "slice [" + std::to_string(source.sample_begin()) + ", " +
                                     std::to_string(source.sample_end()) +
                                     ") is not within a micro-batch of " +
                                     std::to_string(setup.plan->schedule().micro_batch_size()));
    }
    const proto::DataSource& dataset = source.dataset();
    if (def.input_size() != 0 || def.output_size() != dataset.output_size()) {
      return KernelDefError(def, "expects no inputs and the " +
                                     std::to_string(dataset.output_size()) +
                                     " outputs of source '" + dataset.name() + "'");
    }
    for (int index = 0; index < dataset.output_size(); ++index) {
      const proto::SourceOutput& output = dataset.output(index);
      std::vector<int64_t> dims = {samples};
      dims.insert(dims.end(), output.sample_dims().begin(), output.sample_dims().end());
      SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output '" + output.name() + "'",
                                          ShapeOf(def.output(index)), Shape(dims)));
      if (def.output(index).dtype() != output.dtype()) {
        return KernelDefError(def, "output '" + output.name() + "' has the wrong dtype");
      }
    }
    StatusOr<std::unique_ptr<data::Dataset>> opened =
        data::OpenDataset(dataset, setup.plan->job_directory());
    if (!opened.ok()) return opened.status().WithContext(def.op_type());
    return std::unique_ptr<Kernel>(new SourceKernel(std::move(opened).value(),
                                                    setup.plan->schedule().micro_batch_size(),
                                                    source.sample_begin(), source.sample_end()));
  }

  Status Run(const KernelContext& context) override {
    return dataset_->Fill(context.first_piece, micro_batch_size_, sample_begin_, sample_end_,
                          context.outputs);
  }

 private:
  SourceKernel(std::unique_ptr<data::Dataset> dataset, int64_t micro_batch_size,
               int64_t sample_begin, int64_t sample_end)
      : dataset_(std::move(dataset)),
        micro_batch_size_(micro_batch_size),
        sample_begin_(sample_begin),
        sample_end_(sample_end) {}

  const std::unique_ptr<data::Dataset> dataset_;
  const int64_t micro_batch_size_;
  const int64_t sample_begin_;
  const int64_t sample_end_;
};

}  // namespace

void RegisterSourceKernel(KernelRegistry* registry) {
  registry->Register("source", SourceKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
