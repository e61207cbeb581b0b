// NpyDataset: samples stored as NumPy `.npy` files, one file per source output.
//
// Axis 0 of every file indexes samples; the remaining axes must equal the output's
// sample_dims, and every file must hold the same number of samples N. The whole run reads the
// samples as one endless sequence: position g = piece * micro_batch_size + j (j the sample's
// index inside its micro-batch) lies in epoch g / N at offset g % N and reads
//   - without shuffle: sample g % N (file order, wrapping around the end);
//   - with shuffle:    sample Permutation(seed, g / N)[g % N].
// Permutation(seed, epoch) is a Fisher-Yates shuffle of [0, N) whose swap at step i (from
// N-1 down to 1) is with UniformIntAt(HashCounter(seed, epoch), i, i + 1) (base/random.h), so
// any slice of any micro-batch can be produced alone and agrees with the whole.
#ifndef SOFTWIRE_DATA_NPY_DATASET_H_
#define SOFTWIRE_DATA_NPY_DATASET_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/npy.h"
#include "data/dataset.h"
#include "data/source_layout.h"

namespace softwire {
namespace data {

class NpyDataset : public Dataset {
 public:
  // Loads every file of `source` (which must hold an NpyDataset) into memory and checks it
  // against the declared outputs. Paths resolve under `data_root`. Errors name
  // the source, the output and the file.
  static StatusOr<std::unique_ptr<NpyDataset>> Open(const proto::DataSource& source,
                                                    const DataRoot& data_root);

  // Thread-safe; may be called concurrently. Shuffled reads share a small per-epoch cache of
  // permutations guarded by a mutex (see PermutationFor).
  Status Fill(int64_t piece, int64_t micro_batch_size, int64_t sample_begin, int64_t sample_end,
              const std::vector<TensorView>& outputs) const override;

  int64_t sample_count() const override { return sample_count_; }
  int64_t resident_bytes() const override;

 private:
  // Epochs whose permutation stays cached. Concurrent pieces lie in at most two neighbouring
  // epochs at a time in practice; four leaves slack for slices that run ahead.
  static constexpr size_t kCachedEpochs = 4;

  NpyDataset(SourceLayout layout, std::vector<NpyArray> arrays, int64_t sample_count, bool shuffle,
             uint64_t seed);

  // Permutation(seed, epoch), computed on first use and cached. The pointer is shared because
  // a Fill keeps reading a permutation that another thread may evict from the cache meanwhile.
  std::shared_ptr<const std::vector<int64_t>> PermutationFor(int64_t epoch) const EXCLUDES(mutex_);

  // Fixed after Open.
  const SourceLayout layout_;
  const std::vector<NpyArray> arrays_;  // One per output, in declaration order.
  const int64_t sample_count_;
  const bool shuffle_;
  const uint64_t seed_;

  // Permutation cache (shuffle only).
  mutable Mutex mutex_;
  mutable std::map<int64_t, std::shared_ptr<const std::vector<int64_t>>> permutations_
      GUARDED_BY(mutex_);
};

// Permutation(seed, epoch) of [0, sample_count) as defined in the file comment.
std::vector<int64_t> EpochPermutation(uint64_t seed, int64_t epoch, int64_t sample_count);

}  // namespace data
}  // namespace softwire

#endif  // SOFTWIRE_DATA_NPY_DATASET_H_
