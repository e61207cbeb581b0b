#include "data/text_dataset.h"

#include <cmath>
#include <utility>

#include "base/file.h"
#include "base/random.h"

namespace softwire {
namespace data {
namespace {

// Both outputs must be int32 [context].
Status CheckOutputs(const SourceLayout& layout, int64_t context) {
  if (layout.output_count() != 2) {
    return InvalidArgumentError(layout.Describe() +
                                ": a text dataset has exactly two outputs "
                                "(token ids, next-token targets), found " +
                                std::to_string(layout.output_count()));
  }
  for (int k = 0; k < 2; ++k) {
    const SourceOutputLayout& output = layout.outputs()[k];
    if (output.dtype != DType::kInt32) {
      return InvalidArgumentError(layout.Describe(k) + ": text outputs are int32, declared " +
                                  DTypeName(output.dtype));
    }
    if (output.sample_shape != Shape({context})) {
      return InvalidArgumentError(layout.Describe(k) + ": sample_dims " +
                                  output.sample_shape.ToString() + " must be [context] = [" +
                                  std::to_string(context) + "]");
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<TextDataset>> TextDataset::Open(const proto::DataSource& source,
                                                         const DataRoot& data_root) {
  SOFTWIRE_ASSIGN_OR_RETURN(SourceLayout layout, SourceLayout::Build(source));
  const proto::TextDataset& text = source.text();
  if (text.context() <= 0) {
    return InvalidArgumentError(layout.Describe() + ": text.context must be positive, got " +
                                std::to_string(text.context()));
  }
  if (!(text.train_fraction() >= 0.0 && text.train_fraction() <= 1.0)) {
    return InvalidArgumentError(layout.Describe() +
                                ": text.train_fraction must be in [0, 1], "
                                "got " +
                                std::to_string(text.train_fraction()));
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputs(layout, text.context()));
  StatusOr<std::string> resolved = ResolveDataPath(data_root, text.path());
  if (!resolved.ok()) return resolved.status().WithContext(layout.Describe());
  const std::string& path = *resolved;
  StatusOr<std::string> contents = ReadFile(path);
  if (!contents.ok()) return contents.status().WithContext(layout.Describe());
  int64_t usable = static_cast<int64_t>(contents->size());
  if (text.train_fraction() > 0.0) {
    usable = static_cast<int64_t>(std::floor(static_cast<double>(usable) * text.train_fraction()));
  }
  if (usable <= text.context()) {
    return InvalidArgumentError(layout.Describe() + ": file '" + path + "' has " +
                                std::to_string(usable) + " usable bytes (of " +
                                std::to_string(contents->size()) + "), which must exceed context " +
                                std::to_string(text.context()));
  }
  contents->resize(static_cast<size_t>(usable));
  return std::unique_ptr<TextDataset>(
      new TextDataset(std::move(layout), std::move(contents).value(), text.context(), text.seed()));
}

TextDataset::TextDataset(SourceLayout layout, std::string text, int64_t context, uint64_t seed)
    : layout_(std::move(layout)), text_(std::move(text)), context_(context), seed_(seed) {}

int64_t TextDataset::sample_count() const {
  return static_cast<int64_t>(text_.size()) - context_;
}

int64_t TextDataset::WindowOffset(int64_t sample) const {
  return UniformIntAt(seed_, static_cast<uint64_t>(sample), sample_count());
}

Status TextDataset::Fill(int64_t piece, int64_t micro_batch_size, int64_t sample_begin,
                         int64_t sample_end, const std::vector<TensorView>& outputs) const {
  SOFTWIRE_RETURN_IF_ERROR(
      layout_.CheckFillArguments(piece, micro_batch_size, sample_begin, sample_end, outputs));
  int32_t* ids = outputs[0].As<int32_t>();
  int32_t* targets = outputs[1].As<int32_t>();
  for (int64_t j = sample_begin; j < sample_end; ++j) {
    int64_t offset = WindowOffset(piece * micro_batch_size + j);
    const unsigned char* window = reinterpret_cast<const unsigned char*>(text_.data()) + offset;
    int64_t row = (j - sample_begin) * context_;
    for (int64_t t = 0; t < context_; ++t) {
      ids[row + t] = window[t];
      targets[row + t] = window[t + 1];
    }
  }
  return Status::Ok();
}

}  // namespace data
}  // namespace softwire
