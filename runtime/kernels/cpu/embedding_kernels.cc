// embedding (row gather from table [V, C]) and embedding_grad (row scatter-add into
// dtable [num_embeddings, C]). Ids are range-checked first, before any output is written.
//
// Parallelism: embedding over ids (each copies one row). embedding_grad over columns, as
// docs/OPS.md requires: each thread owns a range of every dtable row and adds the dy rows in id
// order, so repeated ids accumulate deterministically without shared accumulators.
#include <algorithm>
#include <cstring>
#include <memory>

#include "runtime/kernels/cpu/attribute_reader.h"
#include "runtime/kernels/cpu/index_check.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

// y[..., C] from ids [...]: the shape every embedding output and gradient input has.
Shape RowsOfIds(const Shape& ids, int64_t channels) {
  std::vector<int64_t> dims = ids.dims();
  dims.push_back(channels);
  return Shape(std::move(dims));
}

class EmbeddingKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(AttributeReader(def).Finish());
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"table", "ids"}, {DType::kFloat32, DType::kInt32},
                                            {"y"}, {DType::kFloat32}));
    Shape table = ShapeOf(def.input(0));
    if (table.rank() != 2) {
      return KernelDefError(def, "table must have rank 2, not " + table.ToString());
    }
    Shape ids = ShapeOf(def.input(1));
    SOFTWIRE_RETURN_IF_ERROR(
        CheckShape(def, "output y", ShapeOf(def.output(0)), RowsOfIds(ids, table.dim(1))));
    return std::unique_ptr<Kernel>(
        new EmbeddingKernel(table.dim(0), table.dim(1), ids.NumElements()));
  }

  Status Run(const KernelContext& context) override {
    const float* table = context.inputs[0].As<float>();
    const int32_t* ids = context.inputs[1].As<int32_t>();
    float* y = context.outputs[0].As<float>();
    SOFTWIRE_RETURN_IF_ERROR(CheckIndices("embedding", "ids", ids, lookups_, rows_));
    const int64_t channels = channels_;
    ParallelFor(context.parallel, lookups_, MinChunkFor(channels), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        std::memcpy(y + i * channels, table + ids[i] * channels,
                    sizeof(float) * static_cast<size_t>(channels));
      }
    });
    return Status::Ok();
  }

 private:
  EmbeddingKernel(int64_t rows, int64_t channels, int64_t lookups)
      : rows_(rows), channels_(channels), lookups_(lookups) {}

  const int64_t rows_;      // V.
  const int64_t channels_;  // C.
  const int64_t lookups_;   // Number of ids.
};

class EmbeddingGradKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    AttributeReader attributes(def);
    int64_t num_embeddings = attributes.RequiredInt("num_embeddings");
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"dy", "ids"}, {DType::kFloat32, DType::kInt32},
                                            {"dtable"}, {DType::kFloat32}));
    if (num_embeddings < 0) return KernelDefError(def, "num_embeddings must be >= 0");
    Shape dy = ShapeOf(def.input(0));
    Shape ids = ShapeOf(def.input(1));
    if (dy.rank() != ids.rank() + 1) {
      return KernelDefError(def, "dy " + dy.ToString() + " must be ids " + ids.ToString() +
                                     " with one more (channel) axis");
    }
    const int64_t channels = dy.dim(-1);
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "input dy", dy, RowsOfIds(ids, channels)));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output dtable", ShapeOf(def.output(0)),
                                        Shape({num_embeddings, channels})));
    return std::unique_ptr<Kernel>(
        new EmbeddingGradKernel(num_embeddings, channels, ids.NumElements()));
  }

  Status Run(const KernelContext& context) override {
    const float* dy = context.inputs[0].As<float>();
    const int32_t* ids = context.inputs[1].As<int32_t>();
    float* dtable = context.outputs[0].As<float>();
    SOFTWIRE_RETURN_IF_ERROR(CheckIndices("embedding_grad", "ids", ids, lookups_, rows_));
    const int64_t channels = channels_;
    ParallelFor(context.parallel, channels, MinChunkFor(rows_ + lookups_),
                [&](int64_t begin, int64_t end) {
                  for (int64_t row = 0; row < rows_; ++row) {
                    std::fill(dtable + row * channels + begin, dtable + row * channels + end, 0.0f);
                  }
                  for (int64_t i = 0; i < lookups_; ++i) {
                    float* target = dtable + ids[i] * channels;
                    const float* source = dy + i * channels;
                    for (int64_t c = begin; c < end; ++c) target[c] += source[c];
                  }
                });
    return Status::Ok();
  }

 private:
  EmbeddingGradKernel(int64_t rows, int64_t channels, int64_t lookups)
      : rows_(rows), channels_(channels), lookups_(lookups) {}

  const int64_t rows_;      // num_embeddings.
  const int64_t channels_;  // C.
  const int64_t lookups_;   // Number of ids.
};

}  // namespace

void RegisterEmbeddingKernels(KernelRegistry* registry) {
  registry->Register("embedding", EmbeddingKernel::Create);
  registry->Register("embedding_grad", EmbeddingGradKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
