// source: fills a source actor's outputs with one piece's slice of its dataset (data/). The
// dataset is opened once, when the kernel is created; Fill is const and thread-safe, so a large
// piece is filled in row ranges over the device's cores (synthetic data costs ~20-40 ns per
// element of hashing and Box-Muller: 8 ms for the MLP benchmark's 256 x 784 batch on one core).
#include <algorithm>
#include <memory>

#include "data/dataset.h"
#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

class SourceKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(def).Finish());
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
    StatusOr<std::unique_ptr<data::Dataset>> opened = data::OpenDataset(dataset, setup.data_root);
    if (!opened.ok()) return opened.status().WithContext(def.op_type());
    return std::unique_ptr<Kernel>(new SourceKernel(std::move(opened).value(),
                                                    setup.plan->schedule().micro_batch_size(),
                                                    source.sample_begin(), source.sample_end()));
  }

  Status Run(const KernelContext& context) override {
    const int64_t rows = sample_end_ - sample_begin_;
    const int64_t chunks = std::min<int64_t>(context.parallel->threads(), rows);
    if (chunks <= 1 || rows * RowElements(context.outputs) < kMinParallelRowElements) {
      return dataset_->Fill(context.first_piece, micro_batch_size_, sample_begin_, sample_end_,
                            context.outputs);
    }
    if (static_cast<int64_t>(chunk_views_.size()) != chunks) PlanChunks(context.outputs, chunks);
    // The chunk views' shapes were built once; only their data pointers follow the slots.
    for (int64_t c = 0; c < chunks; ++c) {
      for (size_t k = 0; k < context.outputs.size(); ++k) {
        const TensorView& whole = context.outputs[k];
        const int64_t row_bytes = whole.NumBytes() / rows;
        chunk_views_[static_cast<size_t>(c)][k].data =
            static_cast<char*>(whole.data) + chunk_begin_[static_cast<size_t>(c)] * row_bytes;
      }
    }
    ParallelFor(context.parallel, chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const size_t chunk = static_cast<size_t>(c);
        chunk_status_[chunk] = dataset_->Fill(
            context.first_piece, micro_batch_size_, sample_begin_ + chunk_begin_[chunk],
            sample_begin_ + chunk_begin_[chunk + 1], chunk_views_[chunk]);
      }
    });
    for (const Status& status : chunk_status_) SOFTWIRE_RETURN_IF_ERROR(status);
    return Status::Ok();
  }

 private:
  SourceKernel(std::unique_ptr<data::Dataset> dataset, int64_t micro_batch_size,
               int64_t sample_begin, int64_t sample_end)
      : dataset_(std::move(dataset)),
        micro_batch_size_(micro_batch_size),
        sample_begin_(sample_begin),
        sample_end_(sample_end) {}

  // Below this many elements a piece is filled on the calling thread.
  static constexpr int64_t kMinParallelRowElements = int64_t{1} << 14;

  static int64_t RowElements(const std::vector<TensorView>& outputs) {
    int64_t elements = 0;
    for (const TensorView& output : outputs) elements += output.shape.NumElements();
    return elements;
  }

  // Splits the piece's rows into `chunks` even ranges and builds each range's views (shapes
  // [range rows, sample dims...]); done on the first firing, since a device's thread count is
  // fixed.
  void PlanChunks(const std::vector<TensorView>& outputs, int64_t chunks) {
    const int64_t rows = sample_end_ - sample_begin_;
    chunk_begin_.assign(static_cast<size_t>(chunks) + 1, 0);
    for (int64_t c = 0; c <= chunks; ++c) chunk_begin_[static_cast<size_t>(c)] = rows * c / chunks;
    chunk_views_.assign(static_cast<size_t>(chunks), {});
    chunk_status_.assign(static_cast<size_t>(chunks), Status::Ok());
    for (int64_t c = 0; c < chunks; ++c) {
      for (const TensorView& whole : outputs) {
        std::vector<int64_t> dims = whole.shape.dims();
        dims[0] = chunk_begin_[static_cast<size_t>(c) + 1] - chunk_begin_[static_cast<size_t>(c)];
        chunk_views_[static_cast<size_t>(c)].push_back(
            TensorView{whole.dtype, Shape(std::move(dims)), nullptr});
      }
    }
  }

  const std::unique_ptr<data::Dataset> dataset_;
  const int64_t micro_batch_size_;
  const int64_t sample_begin_;
  const int64_t sample_end_;
  std::vector<int64_t> chunk_begin_;                  // chunks + 1 row offsets.
  std::vector<std::vector<TensorView>> chunk_views_;  // Per chunk, per output.
  std::vector<Status> chunk_status_;
};

}  // namespace

void RegisterSourceKernel(KernelRegistry* registry) {
  registry->Register("source", SourceKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
