// SyntheticDataset: random samples from a seed, for benchmarks and tests. Holds no memory and
// is unbounded (sample_count() is 0).
//
// Values are a pure function of the element's logical position, so any slice of any
// micro-batch equals the same part of the whole. For output k with E elements per sample,
// element e of logical sample s = piece * micro_batch_size + j has global index
// i = s * E + e and value
//   float32: NormalAt(StreamSeed(seed, k), i)                 (standard normal)
//   int32:   UniformIntAt(StreamSeed(seed, k), i, int_high)   (uniform in [0, int_high))
// where StreamSeed(seed, k) = HashCounter(seed, k) gives every output its own stream.
#ifndef SOFTWIRE_DATA_SYNTHETIC_DATASET_H_
#define SOFTWIRE_DATA_SYNTHETIC_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/source_layout.h"

namespace softwire {
namespace data {

class SyntheticDataset : public Dataset {
 public:
  // `source` must hold a SyntheticDataset. int_high must be positive when any output is int32.
  static StatusOr<std::unique_ptr<SyntheticDataset>> Open(const proto::DataSource& source);

  // Thread-safe: no mutable state.
  Status Fill(int64_t piece, int64_t micro_batch_size, int64_t sample_begin, int64_t sample_end,
              const std::vector<TensorView>& outputs) const override;

  int64_t sample_count() const override { return 0; }
  int64_t resident_bytes() const override { return 0; }

 private:
  SyntheticDataset(SourceLayout layout, uint64_t seed, int64_t int_high);

  const SourceLayout layout_;
  const uint64_t seed_;
  const int64_t int_high_;
};

// The seed of output `output`'s stream: HashCounter(seed, output).
uint64_t SyntheticStreamSeed(uint64_t seed, int output);

}  // namespace data
}  // namespace softwire

#endif  // SOFTWIRE_DATA_SYNTHETIC_DATASET_H_
