#include "data/npy_dataset.h"

#include <cstring>
#include <numeric>
#include <utility>

#include "base/file.h"
#include "base/random.h"

namespace softwire {
namespace data {
namespace {

// Loads the file of output `k` and checks its dtype and sample shape against the declaration.
StatusOr<NpyArray> LoadOutputFile(const SourceLayout& layout, int k, const std::string& path) {
  std::string where = layout.Describe(k) + ": file '" + path + "'";
  StatusOr<NpyArray> array = ReadNpy(path);
  if (!array.ok()) return array.status().WithContext(layout.Describe(k));
  const SourceOutputLayout& output = layout.outputs()[k];
  if (array->dtype != output.dtype) {
    return InvalidArgumentError(where + ": holds " + DTypeName(array->dtype) +
                                " but the output is declared " + DTypeName(output.dtype));
  }
  if (array->shape.rank() == 0) {
    return InvalidArgumentError(where + ": is a scalar; axis 0 must index samples");
  }
  std::vector<int64_t> sample_dims(array->shape.dims().begin() + 1, array->shape.dims().end());
  if (Shape(sample_dims) != output.sample_shape) {
    return InvalidArgumentError(where + ": shape " + array->shape.ToString() +
                                " has samples of shape " + Shape(sample_dims).ToString() +
                                " but the output declares sample_dims " +
                                output.sample_shape.ToString());
  }
  return array;
}

}  // namespace

std::vector<int64_t> EpochPermutation(uint64_t seed, int64_t epoch, int64_t sample_count) {
  std::vector<int64_t> permutation(static_cast<size_t>(sample_count));
  std::iota(permutation.begin(), permutation.end(), int64_t{0});
  uint64_t epoch_seed = HashCounter(seed, static_cast<uint64_t>(epoch));
  for (int64_t i = sample_count - 1; i >= 1; --i) {
    int64_t j = UniformIntAt(epoch_seed, static_cast<uint64_t>(i), i + 1);
    std::swap(permutation[i], permutation[j]);
  }
  return permutation;
}

StatusOr<std::unique_ptr<NpyDataset>> NpyDataset::Open(const proto::DataSource& source,
                                                       const DataRoot& data_root) {
  SOFTWIRE_ASSIGN_OR_RETURN(SourceLayout layout, SourceLayout::Build(source));
  const proto::NpyDataset& npy = source.npy();
  if (npy.path_size() != layout.output_count()) {
    return InvalidArgumentError(layout.Describe() + ": npy dataset lists " +
                                std::to_string(npy.path_size()) + " paths for " +
                                std::to_string(layout.output_count()) +
                                " outputs (one file per output, in order)");
  }
  std::vector<NpyArray> arrays;
  int64_t sample_count = -1;
  std::string first_path;
  for (int k = 0; k < layout.output_count(); ++k) {
    StatusOr<std::string> path_or = ResolveDataPath(data_root, npy.path(k));
    if (!path_or.ok()) return path_or.status().WithContext(layout.Describe(k));
    const std::string& path = *path_or;
    SOFTWIRE_ASSIGN_OR_RETURN(NpyArray array, LoadOutputFile(layout, k, path));
    int64_t samples = array.shape.dim(0);
    if (k == 0) {
      sample_count = samples;
      first_path = path;
    } else if (samples != sample_count) {
      return InvalidArgumentError(layout.Describe(k) + ": file '" + path + "' holds " +
                                  std::to_string(samples) + " samples but output '" +
                                  layout.outputs()[0].name + "' (file '" + first_path +
                                  "') holds " + std::to_string(sample_count));
    }
    arrays.push_back(std::move(array));
  }
  if (sample_count == 0) {
    return InvalidArgumentError(layout.Describe() + ": file '" + first_path + "' holds no samples");
  }
  return std::unique_ptr<NpyDataset>(new NpyDataset(std::move(layout), std::move(arrays),
                                                    sample_count, npy.shuffle(), npy.seed()));
}

NpyDataset::NpyDataset(SourceLayout layout, std::vector<NpyArray> arrays, int64_t sample_count,
                       bool shuffle, uint64_t seed)
    : layout_(std::move(layout)),
      arrays_(std::move(arrays)),
      sample_count_(sample_count),
      shuffle_(shuffle),
      seed_(seed) {}

int64_t NpyDataset::resident_bytes() const {
  int64_t bytes = 0;
  for (const NpyArray& array : arrays_) bytes += static_cast<int64_t>(array.data.size());
  return bytes;
}

std::shared_ptr<const std::vector<int64_t>> NpyDataset::PermutationFor(int64_t epoch) const {
  {
    MutexLock lock(&mutex_);
    auto found = permutations_.find(epoch);
    if (found != permutations_.end()) return found->second;
  }
  // Computed outside the lock so other epochs stay readable; two threads may both compute the
  // same epoch, and since the result is a pure function of (seed, epoch) either copy is right.
  auto permutation =
      std::make_shared<const std::vector<int64_t>>(EpochPermutation(seed_, epoch, sample_count_));
  MutexLock lock(&mutex_);
  auto inserted = permutations_.emplace(epoch, permutation).first;
  while (permutations_.size() > kCachedEpochs) {
    // Evict the oldest epoch, unless it is the one just asked for (a slice running far behind).
    auto oldest = permutations_.begin();
    if (oldest == inserted) ++oldest;
    permutations_.erase(oldest);
  }
  return inserted->second;
}

Status NpyDataset::Fill(int64_t piece, int64_t micro_batch_size, int64_t sample_begin,
                        int64_t sample_end, const std::vector<TensorView>& outputs) const {
  SOFTWIRE_RETURN_IF_ERROR(
      layout_.CheckFillArguments(piece, micro_batch_size, sample_begin, sample_end, outputs));
  std::shared_ptr<const std::vector<int64_t>> permutation;
  int64_t permutation_epoch = -1;
  for (int64_t j = sample_begin; j < sample_end; ++j) {
    int64_t position = piece * micro_batch_size + j;
    int64_t sample = position % sample_count_;
    if (shuffle_) {
      int64_t epoch = position / sample_count_;
      if (epoch != permutation_epoch) {
        permutation = PermutationFor(epoch);
        permutation_epoch = epoch;
      }
      sample = (*permutation)[sample];
    }
    for (int k = 0; k < layout_.output_count(); ++k) {
      int64_t row_bytes = layout_.outputs()[k].sample_elements * SizeOf(layout_.outputs()[k].dtype);
      std::memcpy(static_cast<char*>(outputs[k].data) + (j - sample_begin) * row_bytes,
                  arrays_[k].data.data() + sample * row_bytes, static_cast<size_t>(row_bytes));
    }
  }
  return Status::Ok();
}

}  // namespace data
}  // namespace softwire
