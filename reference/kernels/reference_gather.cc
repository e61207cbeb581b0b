// Kernels that move elements by index: transpose, embedding and embedding_grad (with the
// physical attributes index_begin and partial of a table split on axis 0, docs/OPS.md).
#include <limits>

#include "reference/kernels/reference_kernel_families.h"
#include "reference/kernels/reference_op_helpers.h"

namespace softwire {
namespace reference {
namespace {

Status Transpose(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  std::vector<int64_t> perm = attributes.RequiredInts("perm");
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 1));
  const ReferenceTensor& x = Input(call, 0);
  std::vector<bool> used(x.shape.rank(), false);
  std::vector<int64_t> y_dims;
  for (int64_t axis : perm) {
    if (axis < 0 || axis >= x.shape.rank() || used[axis]) {
      return OpError(call, "perm is not a permutation of the axes of " + x.shape.ToString());
    }
    used[axis] = true;
    y_dims.push_back(x.shape.dim(static_cast<int>(axis)));
  }
  if (static_cast<int>(perm.size()) != x.shape.rank()) {
    return OpError(call, "perm must have one entry per axis of " + x.shape.ToString());
  }
  const Shape y_shape(y_dims);
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, y_shape));
  for (int64_t flat = 0; flat < y_shape.NumElements(); ++flat) {
    std::vector<int64_t> y_index = Unravel(flat, y_shape);
    std::vector<int64_t> x_index(x.shape.rank());
    for (size_t i = 0; i < perm.size(); ++i) x_index[perm[i]] = y_index[i];
    Output(call, 0).values[flat] = x.values[Ravel(x_index, x.shape)];
  }
  return Status::Ok();
}

// The rows of the logical table a part holds (docs/OPS.md, "Physical attributes"): local row
// r is logical row index_begin + r; with `partial`, ids outside the part belong to other parts.
struct TableRows {
  int64_t index_begin = 0;
  bool partial = false;
};

TableRows ReadTableRows(KernelAttributes* attributes) {
  TableRows part;
  part.index_begin = attributes->Int("index_begin", 0);
  part.partial = attributes->Bool("partial", false);
  return part;
}

// OK when every id is in [index_begin, index_begin + rows), or with `partial` in
// [0, 2^31 - 1): any id some part may hold.
Status CheckIds(const ReferenceKernelCall& call, const ReferenceTensor& ids, int64_t rows,
                const TableRows& part) {
  const int64_t low = part.partial ? 0 : part.index_begin;
  const int64_t high = part.partial ? std::numeric_limits<int32_t>::max() : low + rows;
  for (size_t i = 0; i < ids.values.size(); ++i) {
    if (!(ids.values[i] >= static_cast<double>(low) && ids.values[i] < static_cast<double>(high))) {
      return OpError(call, "ids[" + std::to_string(i) +
                               "] = " + std::to_string(static_cast<int64_t>(ids.values[i])) +
                               " is outside [" + std::to_string(low) + ", " + std::to_string(high) +
                               ")");
    }
  }
  return Status::Ok();
}

// The local row of id `value`, or -1 when another part holds it.
int64_t LocalRow(double value, int64_t rows, const TableRows& part) {
  const int64_t row = static_cast<int64_t>(value) - part.index_begin;
  return row >= 0 && row < rows ? row : -1;
}

Shape IdsWithChannels(const Shape& ids, int64_t channels) {
  std::vector<int64_t> dims = ids.dims();
  dims.push_back(channels);
  return Shape(dims);
}

Status Embedding(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const TableRows part = ReadTableRows(&attributes);
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  if (part.index_begin < 0) return OpError(call, "index_begin must be >= 0");
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 2, 1));
  const ReferenceTensor& table = Input(call, 0);
  const ReferenceTensor& ids = Input(call, 1);
  if (table.shape.rank() != 2) return OpError(call, "table must have rank 2");
  const int64_t rows = table.shape.dim(0);
  const int64_t channels = table.shape.dim(1);
  SOFTWIRE_RETURN_IF_ERROR(CheckIds(call, ids, rows, part));
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, IdsWithChannels(ids.shape, channels)));
  for (size_t i = 0; i < ids.values.size(); ++i) {
    const int64_t row = LocalRow(ids.values[i], rows, part);
    for (int64_t c = 0; c < channels; ++c) {
      Output(call, 0).values[i * channels + c] = row < 0 ? 0.0 : table.values[row * channels + c];
    }
  }
  return Status::Ok();
}

Status EmbeddingGrad(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const int64_t rows = attributes.RequiredInt("num_embeddings");
  const TableRows part = ReadTableRows(&attributes);
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  if (part.index_begin < 0) return OpError(call, "index_begin must be >= 0");
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 2, 1));
  const ReferenceTensor& dy = Input(call, 0);
  const ReferenceTensor& ids = Input(call, 1);
  if (rows < 0 || dy.shape.rank() != ids.shape.rank() + 1) {
    return OpError(call, "dy must be ids' shape plus a channel axis");
  }
  const int64_t channels = dy.shape.dim(-1);
  if (dy.shape != IdsWithChannels(ids.shape, channels)) {
    return OpError(call,
                   "dy " + dy.shape.ToString() + " does not match ids " + ids.shape.ToString());
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckIds(call, ids, rows, part));
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, Shape({rows, channels})));
  std::vector<double>& dtable = Output(call, 0).values;
  for (double& value : dtable) value = 0;
  for (size_t i = 0; i < ids.values.size(); ++i) {
    const int64_t row = LocalRow(ids.values[i], rows, part);
    if (row < 0) continue;  // Another part's row.

    for (int64_t c = 0; c < channels; ++c) {
      dtable[row * channels + c] += dy.values[i * channels + c];
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterReferenceGatherKernels(ReferenceKernelTable* table) {
  table->Register("transpose", Transpose);
  table->Register("embedding", Embedding);
  table->Register("embedding_grad", EmbeddingGrad);
}

}  // namespace reference
}  // namespace softwire
