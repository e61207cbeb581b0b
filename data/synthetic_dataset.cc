#include "data/synthetic_dataset.h"

#include <limits>
#include <utility>

#include "base/random.h"

namespace softwire {
namespace data {

uint64_t SyntheticStreamSeed(uint64_t seed, int output) {
  return HashCounter(seed, static_cast<uint64_t>(output));
}

StatusOr<std::unique_ptr<SyntheticDataset>> SyntheticDataset::Open(
    const proto::DataSource& source) {
  SOFTWIRE_ASSIGN_OR_RETURN(SourceLayout layout, SourceLayout::Build(source));
  int64_t int_high = source.synthetic().int_high();
  for (int k = 0; k < layout.output_count(); ++k) {
    if (layout.outputs()[k].dtype != DType::kInt32) continue;
    if (int_high <= 0 || int_high > std::numeric_limits<int32_t>::max()) {
      return InvalidArgumentError(layout.Describe(k) +
                                  ": int32 synthetic outputs need synthetic.int_high in "
                                  "[1, 2^31 - 1], got " +
                                  std::to_string(int_high));
    }
  }
  return std::unique_ptr<SyntheticDataset>(
      new SyntheticDataset(std::move(layout), source.synthetic().seed(), int_high));
}

SyntheticDataset::SyntheticDataset(SourceLayout layout, uint64_t seed, int64_t int_high)
    : layout_(std::move(layout)), seed_(seed), int_high_(int_high) {}

Status SyntheticDataset::Fill(int64_t piece, int64_t micro_batch_size, int64_t sample_begin,
                              int64_t sample_end, const std::vector<TensorView>& outputs) const {
  SOFTWIRE_RETURN_IF_ERROR(
      layout_.CheckFillArguments(piece, micro_batch_size, sample_begin, sample_end, outputs));
  for (int k = 0; k < layout_.output_count(); ++k) {
    const SourceOutputLayout& output = layout_.outputs()[k];
    uint64_t stream = SyntheticStreamSeed(seed_, k);
    int64_t elements = output.sample_elements;
    uint64_t first = static_cast<uint64_t>(piece * micro_batch_size + sample_begin) *
                     static_cast<uint64_t>(elements);
    int64_t count = (sample_end - sample_begin) * elements;
    if (output.dtype == DType::kFloat32) {
      FillNormals(stream, first, count, outputs[k].As<float>());
    } else {
      int32_t* values = outputs[k].As<int32_t>();
      for (int64_t i = 0; i < count; ++i) {
        values[i] =
            static_cast<int32_t>(UniformIntAt(stream, first + static_cast<uint64_t>(i), int_high_));
      }
    }
  }
  return Status::Ok();
}

}  // namespace data
}  // namespace softwire
