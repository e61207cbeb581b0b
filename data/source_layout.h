// SourceLayout: the declared outputs of a data source (names, dtypes, sample shapes), checked
// once when a dataset opens and used by every Fill to check the views it is handed.
//
// Internal to data/: the three datasets share it so that every declaration error and every
// Fill-argument error reads the same way ("source 'train': output 'x': ...").
#ifndef SOFTWIRE_DATA_SOURCE_LAYOUT_H_
#define SOFTWIRE_DATA_SOURCE_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/shape.h"
#include "base/status.h"
#include "base/tensor_view.h"
#include "proto/job.pb.h"

namespace softwire {
namespace data {

// One declared output of a source.
struct SourceOutputLayout {
  std::string name;
  DType dtype = DType::kInvalid;
  Shape sample_shape;           // Without the micro-batch axis.
  int64_t sample_elements = 0;  // sample_shape.NumElements().
};

// Immutable after Build; safe to read from any thread.
class SourceLayout {
 public:
  // Checks every declared output of `source`: a name, float32 or int32, extents >= 1.
  // Errors are InvalidArgument and name the source and the output.
  static StatusOr<SourceLayout> Build(const proto::DataSource& source);

  const std::string& source_name() const { return source_name_; }
  const std::vector<SourceOutputLayout>& outputs() const { return outputs_; }
  int output_count() const { return static_cast<int>(outputs_.size()); }

  // "source 'train'" or "source 'train': output 'x'": the prefix of every error message.
  std::string Describe() const;
  std::string Describe(int output) const;

  // Checks the arguments of Dataset::Fill: piece >= 0, micro_batch_size > 0,
  // 0 <= sample_begin <= sample_end <= micro_batch_size, one view per output, each with the
  // output's dtype, shape [sample_end - sample_begin, sample_dims...] and non-null data (unless
  // empty). InvalidArgument naming the source and output otherwise.
  Status CheckFillArguments(int64_t piece, int64_t micro_batch_size, int64_t sample_begin,
                            int64_t sample_end, const std::vector<TensorView>& outputs) const;

 private:
  std::string source_name_;
  std::vector<SourceOutputLayout> outputs_;
};

}  // namespace data
}  // namespace softwire

#endif  // SOFTWIRE_DATA_SOURCE_LAYOUT_H_
