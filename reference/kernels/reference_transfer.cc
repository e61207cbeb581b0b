// The transfer and boxing ops of docs/OPS.md: copy, slice, assemble, flat_split and
// flat_concat, element by element through multi-indices. Any dtype (values are doubles; int32
// ones stay exact); every input and output of one op shares it.
#include "reference/kernels/reference_kernel_families.h"
#include "reference/kernels/reference_op_helpers.h"

namespace softwire {
namespace reference {
namespace {

// OK when every input and output has input 0's dtype.
Status CheckOneDType(const ReferenceKernelCall& call) {
  const DType dtype = Input(call, 0).dtype;
  for (size_t k = 0; k < call.inputs.size(); ++k) {
    if (Input(call, k).dtype != dtype) {
      return OpError(call, "input " + std::to_string(k) + " has another dtype than input 0");
    }
  }
  for (size_t k = 0; k < call.outputs->size(); ++k) {
    if (Output(call, k).dtype != dtype) {
      return OpError(call, "output " + std::to_string(k) + " has another dtype than input 0");
    }
  }
  return Status::Ok();
}

// OK when `call` has `inputs` inputs (-1: at least one) and `outputs` outputs (-1: at least
// one), each holding as many values as its shape, all of one dtype.
Status CheckTransferArity(const ReferenceKernelCall& call, int inputs, int outputs) {
  const size_t input_count = call.inputs.size();
  const size_t output_count = call.outputs == nullptr ? 0 : call.outputs->size();
  if (input_count == 0 || output_count == 0 ||
      (inputs >= 0 && input_count != static_cast<size_t>(inputs)) ||
      (outputs >= 0 && output_count != static_cast<size_t>(outputs))) {
    return OpError(call, "has " + std::to_string(input_count) + " inputs and " +
                             std::to_string(output_count) + " outputs");
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, input_count, output_count));
  for (size_t k = 0; k < output_count; ++k) {
    const ReferenceTensor& output = Output(call, k);
    if (static_cast<int64_t>(output.values.size()) != output.shape.NumElements()) {
      return OpError(call, "output " + std::to_string(k) + " is mis-sized");
    }
  }
  return CheckOneDType(call);
}

Status Copy(const ReferenceKernelCall& call) {
  SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(*call.def).Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckTransferArity(call, 1, 1));
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, Input(call, 0).shape));
  Output(call, 0).values = Input(call, 0).values;
  return Status::Ok();
}

Status Slice(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const std::vector<int64_t> begin = attributes.RequiredInts("begin");
  const std::vector<int64_t> end = attributes.RequiredInts("end");
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckTransferArity(call, 1, 1));
  const ReferenceTensor& x = Input(call, 0);
  const int rank = x.shape.rank();
  if (static_cast<int>(begin.size()) != rank || static_cast<int>(end.size()) != rank) {
    return OpError(call, "begin and end need one entry per axis of x " + x.shape.ToString());
  }
  std::vector<int64_t> dims;
  for (int axis = 0; axis < rank; ++axis) {
    if (begin[axis] < 0 || begin[axis] >= end[axis] || end[axis] > x.shape.dim(axis)) {
      return OpError(call, "axis " + std::to_string(axis) + ": [" + std::to_string(begin[axis]) +
                               ", " + std::to_string(end[axis]) +
                               ") is not a non-empty range of [0, " +
                               std::to_string(x.shape.dim(axis)) + ")");
    }
    dims.push_back(end[axis] - begin[axis]);
  }
  const Shape y_shape(dims);
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, y_shape));
  for (int64_t flat = 0; flat < y_shape.NumElements(); ++flat) {
    std::vector<int64_t> index = Unravel(flat, y_shape);
    for (int axis = 0; axis < rank; ++axis) index[axis] += begin[axis];
    Output(call, 0).values[flat] = x.values[Ravel(index, x.shape)];
  }
  return Status::Ok();
}

Status Assemble(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const Shape y_shape(attributes.RequiredInts("shape"));
  const std::vector<int64_t> offsets = attributes.RequiredInts("offsets");
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckTransferArity(call, -1, 1));
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, y_shape));
  const size_t rank = static_cast<size_t>(y_shape.rank());
  if (offsets.size() != call.inputs.size() * rank) {
    return OpError(call, "offsets needs " + std::to_string(rank) + " entries per input");
  }
  std::vector<double>& y = Output(call, 0).values;
  for (double& value : y) value = 0;
  for (size_t k = 0; k < call.inputs.size(); ++k) {
    const ReferenceTensor& x = Input(call, k);
    if (static_cast<size_t>(x.shape.rank()) != rank) {
      return OpError(call, "input " + std::to_string(k) + " must have y's rank");
    }
    for (size_t axis = 0; axis < rank; ++axis) {
      const int64_t at = offsets[k * rank + axis];
      if (at < 0 ||
          at + x.shape.dim(static_cast<int>(axis)) > y_shape.dim(static_cast<int>(axis))) {
        return OpError(call, "input " + std::to_string(k) + " " + x.shape.ToString() +
                                 " does not fit in " + y_shape.ToString() + " at its offsets");
      }
    }
    for (int64_t flat = 0; flat < x.shape.NumElements(); ++flat) {
      std::vector<int64_t> index = Unravel(flat, x.shape);
      for (size_t axis = 0; axis < rank; ++axis) index[axis] += offsets[k * rank + axis];
      y[Ravel(index, y_shape)] += x.values[flat];
    }
  }
  return Status::Ok();
}

// OK when `chunks` are 1-D tensors whose sizes add up to `total`.
Status CheckChunks(const ReferenceKernelCall& call,
                   const std::vector<const ReferenceTensor*>& chunks, int64_t total) {
  int64_t sum = 0;
  for (const ReferenceTensor* chunk : chunks) {
    if (chunk->shape.rank() != 1) return OpError(call, "chunks must be 1-D");
    sum += chunk->shape.dim(0);
  }
  if (sum != total) {
    return OpError(
        call, "chunks hold " + std::to_string(sum) + " elements, not " + std::to_string(total));
  }
  return Status::Ok();
}

Status FlatSplit(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const std::vector<int64_t> sizes = attributes.RequiredInts("sizes");
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckTransferArity(call, 1, -1));
  if (sizes.size() != call.outputs->size()) {
    return OpError(call, "sizes must name one chunk per output");
  }
  std::vector<const ReferenceTensor*> chunks;
  for (size_t k = 0; k < sizes.size(); ++k) {
    SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, k, Shape({sizes[k]})));
    chunks.push_back(&Output(call, k));
  }
  const ReferenceTensor& x = Input(call, 0);
  SOFTWIRE_RETURN_IF_ERROR(CheckChunks(call, chunks, x.shape.NumElements()));
  size_t at = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    for (double& value : Output(call, k).values) value = x.values[at++];
  }
  return Status::Ok();
}

Status FlatConcat(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const Shape y_shape(attributes.RequiredInts("shape"));
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckTransferArity(call, -1, 1));
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, y_shape));
  SOFTWIRE_RETURN_IF_ERROR(CheckChunks(call, call.inputs, y_shape.NumElements()));
  size_t at = 0;
  for (const ReferenceTensor* chunk : call.inputs) {
    for (double value : chunk->values) Output(call, 0).values[at++] = value;
  }
  return Status::Ok();
}

}  // namespace

void RegisterReferenceTransferKernels(ReferenceKernelTable* table) {
  table->Register("copy", Copy);
  table->Register("slice", Slice);
  table->Register("assemble", Assemble);
  table->Register("flat_split", FlatSplit);
  table->Register("flat_concat", FlatConcat);
}

}  // namespace reference
}  // namespace softwire
