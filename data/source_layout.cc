#include "data/source_layout.h"

#include "proto/tensor_desc.h"

namespace softwire {
namespace data {

StatusOr<SourceLayout> SourceLayout::Build(const proto::DataSource& source) {
  SourceLayout layout;
  layout.source_name_ = source.name();
  if (source.output_size() == 0) {
    return InvalidArgumentError(layout.Describe() + ": declares no outputs");
  }
  for (const proto::SourceOutput& output : source.output()) {
    SourceOutputLayout entry;
    entry.name = output.name();
    entry.dtype = DTypeOf(output.dtype());
    std::vector<int64_t> dims(output.sample_dims().begin(), output.sample_dims().end());
    entry.sample_shape = Shape(std::move(dims));
    layout.outputs_.push_back(entry);
    std::string where = layout.Describe(layout.output_count() - 1);
    if (entry.name.empty()) return InvalidArgumentError(where + ": has no name");
    if (entry.dtype == DType::kInvalid) {
      return InvalidArgumentError(where + ": dtype must be DATA_TYPE_FLOAT32 or DATA_TYPE_INT32");
    }
    for (int64_t extent : entry.sample_shape.dims()) {
      if (extent < 1) {
        return InvalidArgumentError(where + ": sample_dims " + entry.sample_shape.ToString() +
                                    " has an extent < 1");
      }
    }
    layout.outputs_.back().sample_elements = entry.sample_shape.NumElements();
  }
  return layout;
}

std::string SourceLayout::Describe() const {
  return "source '" + source_name_ + "'";
}

std::string SourceLayout::Describe(int output) const {
  return Describe() + ": output '" + outputs_[output].name + "'";
}

Status SourceLayout::CheckFillArguments(int64_t piece, int64_t micro_batch_size,
                                        int64_t sample_begin, int64_t sample_end,
                                        const std::vector<TensorView>& outputs) const {
  if (piece < 0) {
    return InvalidArgumentError(Describe() + ": piece " + std::to_string(piece) + " is negative");
  }
  if (micro_batch_size <= 0) {
    return InvalidArgumentError(Describe() + ": micro_batch_size must be positive, got " +
                                std::to_string(micro_batch_size));
  }
  if (sample_begin < 0 || sample_begin > sample_end || sample_end > micro_batch_size) {
    return InvalidArgumentError(Describe() + ": samples [" + std::to_string(sample_begin) + ", " +
                                std::to_string(sample_end) +
                                ") are not a range inside a micro-batch of " +
                                std::to_string(micro_batch_size));
  }
  if (static_cast<int>(outputs.size()) != output_count()) {
    return InvalidArgumentError(Describe() + ": Fill got " + std::to_string(outputs.size()) +
                                " output views for " + std::to_string(output_count()) +
                                " declared outputs");
  }
  for (int k = 0; k < output_count(); ++k) {
    const SourceOutputLayout& layout = outputs_[k];
    std::vector<int64_t> dims = {sample_end - sample_begin};
    dims.insert(dims.end(), layout.sample_shape.dims().begin(), layout.sample_shape.dims().end());
    Shape expected(std::move(dims));
    const TensorView& view = outputs[k];
    if (view.dtype != layout.dtype || view.shape != expected) {
      return InvalidArgumentError(Describe(k) + ": Fill got a " + DTypeName(view.dtype) + " " +
                                  view.shape.ToString() + " view, expected " +
                                  DTypeName(layout.dtype) + " " + expected.ToString());
    }
    if (view.data == nullptr && view.NumElements() > 0) {
      return InvalidArgumentError(Describe(k) + ": Fill got a view without memory");
    }
  }
  return Status::Ok();
}

}  // namespace data
}  // namespace softwire
