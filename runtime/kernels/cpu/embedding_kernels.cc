// embedding (row gather from table [V, C]) and embedding_grad (row scatter-add into
// dtable [num_embeddings, C]). Ids are range-checked first, before any output is written.
//
// Under a table split on axis 0 (docs/OPS.md, "Physical attributes") the local table holds
// rows [index_begin, index_begin + V): id i reads local row i - index_begin. With `partial`,
// ids outside the part are not errors (another part holds them): embedding writes zero rows for
// them and embedding_grad skips them; only negative ids, which no part holds, fail.
//
// Parallelism: embedding over ids (each copies one row). embedding_grad over columns, as
// docs/OPS.md requires: each thread owns a range of every dtable row and adds the dy rows in id
// order, so repeated ids accumulate deterministically without shared accumulators.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/index_check.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

// The rows of the logical table a part holds (docs/OPS.md, "Physical attributes").
struct TableRows {
  int64_t index_begin = 0;  // Logical row of local row 0.
  bool partial = false;     // Ids outside the part belong to other parts.
};

TableRows ReadTableRows(KernelAttributes* attributes) {
  TableRows part;
  part.index_begin = attributes->Int("index_begin", 0);
  part.partial = attributes->Bool("partial", false);
  return part;
}

// OK when every id is one this part may see: in [index_begin, index_begin + rows), or with
// `partial` any id >= 0.
Status CheckIds(const char* op_type, const int32_t* ids, int64_t count, int64_t rows,
                const TableRows& part) {
  if (part.partial) {
    return CheckIndicesIn(op_type, "ids", ids, count, 0, std::numeric_limits<int32_t>::max());
  }
  if (part.index_begin == 0) return CheckIndices(op_type, "ids", ids, count, rows);
  return CheckIndicesIn(op_type, "ids", ids, count, part.index_begin, part.index_begin + rows);
}

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
    KernelAttributes attributes(def);
    const TableRows part = ReadTableRows(&attributes);
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    if (part.index_begin < 0) return KernelDefError(def, "index_begin must be >= 0");
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
        new EmbeddingKernel(table.dim(0), table.dim(1), ids.NumElements(), part));
  }

  Status Run(const KernelContext& context) override {
    const float* table = context.inputs[0].As<float>();
    const int32_t* ids = context.inputs[1].As<int32_t>();
    float* y = context.outputs[0].As<float>();
    SOFTWIRE_RETURN_IF_ERROR(CheckIds("embedding", ids, lookups_, rows_, part_));
    const int64_t channels = channels_;
    const int64_t first = part_.index_begin;
    const uint64_t rows = static_cast<uint64_t>(rows_);
    ParallelFor(context.parallel, lookups_, MinChunkFor(channels), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t row = ids[i] - first;
        if (static_cast<uint64_t>(row) < rows) {
          std::memcpy(y + i * channels, table + row * channels,
                      sizeof(float) * static_cast<size_t>(channels));
        } else {  // Only with `partial`: another part holds the row.
          std::fill(y + i * channels, y + (i + 1) * channels, 0.0f);
        }
      }
    });
    return Status::Ok();
  }

 private:
  EmbeddingKernel(int64_t rows, int64_t channels, int64_t lookups, TableRows part)
      : rows_(rows), channels_(channels), lookups_(lookups), part_(part) {}

  const int64_t rows_;      // V (of this part).
  const int64_t channels_;  // C.
  const int64_t lookups_;   // Number of ids.
  const TableRows part_;
};

class EmbeddingGradKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    KernelAttributes attributes(def);
    int64_t num_embeddings = attributes.RequiredInt("num_embeddings");
    const TableRows part = ReadTableRows(&attributes);
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    if (part.index_begin < 0) return KernelDefError(def, "index_begin must be >= 0");
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
        new EmbeddingGradKernel(num_embeddings, channels, ids.NumElements(), part));
  }

  Status Run(const KernelContext& context) override {
    const float* dy = context.inputs[0].As<float>();
    const int32_t* ids = context.inputs[1].As<int32_t>();
    float* dtable = context.outputs[0].As<float>();
    SOFTWIRE_RETURN_IF_ERROR(CheckIds("embedding_grad", ids, lookups_, rows_, part_));
    const int64_t channels = channels_;
    const int64_t first = part_.index_begin;
    const uint64_t rows = static_cast<uint64_t>(rows_);
    ParallelFor(context.parallel, channels, MinChunkFor(rows_ + lookups_),
                [&](int64_t begin, int64_t end) {
                  for (int64_t row = 0; row < rows_; ++row) {
                    std::fill(dtable + row * channels + begin, dtable + row * channels + end, 0.0f);
                  }
                  for (int64_t i = 0; i < lookups_; ++i) {
                    const int64_t row = ids[i] - first;
                    if (static_cast<uint64_t>(row) >= rows) continue;  // Another part's row.
                    float* target = dtable + row * channels;
                    const float* source = dy + i * channels;
                    for (int64_t c = begin; c < end; ++c) target[c] += source[c];
                  }
                });
    return Status::Ok();
  }

 private:
  EmbeddingGradKernel(int64_t rows, int64_t channels, int64_t lookups, TableRows part)
      : rows_(rows), channels_(channels), lookups_(lookups), part_(part) {}

  const int64_t rows_;      // num_embeddings (of this part).
  const int64_t channels_;  // C.
  const int64_t lookups_;   // Number of ids.
  const TableRows part_;
};

}  // namespace

void RegisterEmbeddingKernels(KernelRegistry* registry) {
  registry->Register("embedding", EmbeddingKernel::Create);
  registry->Register("embedding_grad", EmbeddingGradKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
