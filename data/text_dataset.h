// TextDataset: byte-level language-model windows of a text file.
//
// The file's bytes are token ids (vocabulary 256). Only the first `usable` bytes are read:
// the whole file, or floor(file bytes * train_fraction) when train_fraction is set, the rest
// being held out for validation. Logical sample s = piece * micro_batch_size + j starts at
//   offset(s) = UniformIntAt(seed, s, usable - context)            (base/random.h)
// and yields output 0 = bytes [offset, offset + context) and output 1 = bytes
// [offset + 1, offset + context + 1) (the next-byte targets), both int32 [context]. Every
// window lies inside the usable bytes, and any slice of a micro-batch equals the same part of
// the whole.
#ifndef SOFTWIRE_DATA_TEXT_DATASET_H_
#define SOFTWIRE_DATA_TEXT_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/source_layout.h"

namespace softwire {
namespace data {

class TextDataset : public Dataset {
 public:
  // `source` must hold a TextDataset and declare exactly two int32 outputs with sample_dims
  // [context]. Reads the usable bytes into memory. Errors name the source, output or file.
  static StatusOr<std::unique_ptr<TextDataset>> Open(const proto::DataSource& source,
                                                     const DataRoot& data_root);

  // Thread-safe: no mutable state.
  Status Fill(int64_t piece, int64_t micro_batch_size, int64_t sample_begin, int64_t sample_end,
              const std::vector<TensorView>& outputs) const override;

  // Distinct windows: usable - context. Samples are drawn with replacement, so this only tells
  // how much text there is.
  int64_t sample_count() const override;
  int64_t resident_bytes() const override { return static_cast<int64_t>(text_.size()); }

  // offset(s) of the file comment.
  int64_t WindowOffset(int64_t sample) const;

 private:
  TextDataset(SourceLayout layout, std::string text, int64_t context, uint64_t seed);

  const SourceLayout layout_;
  const std::string text_;  // The usable bytes.
  const int64_t context_;
  const uint64_t seed_;
};

}  // namespace data
}  // namespace softwire

#endif  // SOFTWIRE_DATA_TEXT_DATASET_H_
