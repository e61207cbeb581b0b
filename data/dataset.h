// Dataset: where a source actor's micro-batches come from (npy files, synthetic, text).
//
// The runtime's source kernel and the reference interpreter both read micro-batches through
// this interface, so they see identical data. A micro-batch is defined logically (piece p of
// size b is samples [p*b, (p+1)*b) of the dataset's sample order), and any slice of it can be
// produced alone: data-parallel sources each fill their own slice.
#ifndef SOFTWIRE_DATA_DATASET_H_
#define SOFTWIRE_DATA_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/tensor_view.h"
#include "data/data_root.h"
#include "proto/job.pb.h"

namespace softwire {
namespace data {

class Dataset {
 public:
  virtual ~Dataset() = default;

  // Fills samples [sample_begin, sample_end) of micro-batch `piece` (micro-batches have
  // `micro_batch_size` samples). outputs[k] is the source's k-th output with shape
  // [sample_end - sample_begin, sample_dims...] and its dtype.
  // Thread-safe: const, and may be called concurrently for different pieces.
  virtual Status Fill(int64_t piece, int64_t micro_batch_size, int64_t sample_begin,
                      int64_t sample_end, const std::vector<TensorView>& outputs) const = 0;

  // Samples in one epoch (0 for unbounded synthetic data).
  virtual int64_t sample_count() const = 0;

  // Host bytes the dataset holds in memory.
  virtual int64_t resident_bytes() const = 0;
};

// Opens the dataset of `source`. Its paths resolve under `data_root` (ResolveDataPath); a path
// the root cannot resolve or refuses fails naming the source. Checks every
// file against the declared outputs (dtype, sample shape, equal sample counts) and names the
// source, the output and the file on a mismatch.
StatusOr<std::unique_ptr<Dataset>> OpenDataset(const proto::DataSource& source,
                                               const DataRoot& data_root);

}  // namespace data
}  // namespace softwire

#endif  // SOFTWIRE_DATA_DATASET_H_
