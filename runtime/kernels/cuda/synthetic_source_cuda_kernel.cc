#include "runtime/kernels/cuda/synthetic_source_cuda_kernel.h"

#include <utility>
#include <vector>

#include "base/counter_hash.h"
#include "data/synthetic_dataset.h"
#include "proto/plan.pb.h"
#include "runtime/kernels/cuda/launch_kernel.h"
#include "runtime/kernels/cuda/synthetic_launchers.h"

namespace softwire {
namespace runtime {
namespace {

// One output as the device draws it: its stream's mixed seed and its elements per sample.
struct DrawnOutput {
  uint64_t mixed_seed = 0;
  int64_t sample_elements = 1;
  bool integers = false;
};

}  // namespace

bool IsDeviceSyntheticSource(const KernelSetup& setup) {
  if (setup.actor == nullptr || setup.actor->kernel().op_type() != "source") return false;
  const proto::DataSource& dataset = setup.actor->source().dataset();
  if (dataset.dataset_case() != proto::DataSource::kSynthetic) return false;
  for (const proto::SourceOutput& output : dataset.output()) {
    if (output.dtype() != proto::DATA_TYPE_FLOAT32 && output.dtype() != proto::DATA_TYPE_INT32) {
      return false;
    }
  }
  return true;
}

StatusOr<std::unique_ptr<Kernel>> MakeSyntheticSourceCudaKernel(const KernelSetup& setup) {
  const proto::SourceActorDef& source = setup.actor->source();
  const proto::DataSource& dataset = source.dataset();
  std::vector<DrawnOutput> outputs;
  for (int k = 0; k < dataset.output_size(); ++k) {
    DrawnOutput drawn;
    // SyntheticDataset::Fill's stream of output k, mixed once here as FillNormals mixes it.
    drawn.mixed_seed =
        counter_hash::SplitMix64(data::SyntheticStreamSeed(dataset.synthetic().seed(), k));
    for (int64_t extent : dataset.output(k).sample_dims()) drawn.sample_elements *= extent;
    drawn.integers = dataset.output(k).dtype() == proto::DATA_TYPE_INT32;
    outputs.push_back(drawn);
  }
  const int64_t micro_batch_size = setup.plan->schedule().micro_batch_size();
  const int64_t sample_begin = source.sample_begin();
  const int64_t samples = source.sample_end() - source.sample_begin();
  const int64_t bound = dataset.synthetic().int_high();
  return MakeLaunchKernel(setup, [outputs, micro_batch_size, sample_begin, samples, bound](
                                     const KernelContext& context, cudaStream_t stream) {
    const uint64_t first_sample =
        static_cast<uint64_t>(context.first_piece * micro_batch_size + sample_begin);
    for (size_t k = 0; k < outputs.size(); ++k) {
      const DrawnOutput& drawn = outputs[k];
      const uint64_t first = first_sample * static_cast<uint64_t>(drawn.sample_elements);
      const int64_t count = samples * drawn.sample_elements;
      const cudaError_t error =
          drawn.integers ? cuda::SyntheticInts(drawn.mixed_seed, first, count, bound,
                                               context.outputs[k].As<int32_t>(), stream)
                         : cuda::SyntheticNormals(drawn.mixed_seed, first, count,
                                                  context.outputs[k].As<float>(), stream);
      if (error != cudaSuccess) return error;
    }
    return cudaSuccess;
  });
}

}  // namespace runtime
}  // namespace softwire
