// The transfer and boxing ops of docs/OPS.md: copy, slice, assemble, flat_split and
// flat_concat. The compiler inserts them where a tensor moves between devices or changes its
// sbp (docs/PARALLELISM.md, "Boxing"); a copy actor runs copy or slice with its input in
// another device's arena (one address space: the source slot is read directly).
//
// Every op moves elements of one dtype (float32, int32 for labels and ids, or bfloat16 under
// mixed precision), so all but assemble work on bytes. A block of a larger tensor (what slice reads
// and assemble writes) is walked as runs: the longest contiguous stretches it has in the larger
// tensor, found once when the kernel is created (BlockRuns).
//
// Parallelism: over runs, or over bytes for the flat ops, in chunks of >= kMinParallelWork
// elements. assemble adds its inputs one after another in input order (docs/OPS.md), each
// input's runs in parallel (the runs of one input never overlap), so every output element is
// 0 + x0 + x1 + ... in that order whatever the thread count.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/bfloat16.h"
#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

// The one dtype every input and output of `def` shares; errors when they differ or are
// not float32, int32 or bfloat16.
StatusOr<DType> CommonDType(const proto::KernelDef& def) {
  if (def.input_size() == 0) return KernelDefError(def, "has no input");
  const DType dtype = DTypeOf(def.input(0));
  if (dtype != DType::kFloat32 && dtype != DType::kInt32 && dtype != DType::kBFloat16) {
    return KernelDefError(def, "input 0 must be float32, int32 or bfloat16");
  }
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  for (int k = 0; k < def.input_size(); ++k) inputs.push_back("x" + std::to_string(k));
  for (int k = 0; k < def.output_size(); ++k) outputs.push_back("y" + std::to_string(k));
  SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, inputs, std::vector<DType>(inputs.size(), dtype),
                                          outputs, std::vector<DType>(outputs.size(), dtype)));
  return dtype;
}

// A block of shape `block` placed at `offsets` inside a row-major tensor of shape `whole`, as
// `count` runs of `length` contiguous elements: run i is elements [i * length, (i + 1) *
// length) of the packed block and starts at WholeOffset(i) in the whole tensor.
class BlockRuns {
 public:
  BlockRuns(const Shape& whole, const Shape& block, const std::vector<int64_t>& offsets) {
    const int rank = whole.rank();
    // Axes after `split` are covered completely, so a run spans them and block axis `split`.
    int split = rank - 1;
    while (split > 0 && block.dim(split) == whole.dim(split)) --split;
    std::vector<int64_t> strides(rank, 1);
    for (int axis = rank - 2; axis >= 0; --axis)
      strides[axis] = strides[axis + 1] * whole.dim(axis + 1);
    length_ = rank == 0 ? 1 : block.NumElements(split, rank);
    count_ = rank == 0 ? 1 : block.NumElements(0, split);
    for (int axis = 0; axis < rank; ++axis) base_ += offsets[axis] * strides[axis];
    for (int axis = 0; axis < split; ++axis) {
      outer_extents_.push_back(block.dim(axis));
      outer_strides_.push_back(strides[axis]);
    }
    if (block.NumElements() == 0) count_ = 0;
  }

  int64_t count() const { return count_; }
  int64_t length() const { return length_; }

  // Where run `run` starts in the whole tensor (elements).
  int64_t WholeOffset(int64_t run) const {
    int64_t offset = base_;
    for (int axis = static_cast<int>(outer_extents_.size()) - 1; axis >= 0; --axis) {
      offset += (run % outer_extents_[axis]) * outer_strides_[axis];
      run /= outer_extents_[axis];
    }
    return offset;
  }

 private:
  int64_t length_ = 1;
  int64_t count_ = 1;
  int64_t base_ = 0;
  std::vector<int64_t> outer_extents_;  // Block extents of the axes before the run.
  std::vector<int64_t> outer_strides_;  // Their strides in the whole tensor.
};

// Checks that `block` at `offsets` lies inside `whole`; `what` names the block in errors.
Status CheckBlockInside(const proto::KernelDef& def, const std::string& what, const Shape& whole,
                        const Shape& block, const std::vector<int64_t>& offsets) {
  if (block.rank() != whole.rank() || static_cast<int>(offsets.size()) != whole.rank()) {
    return KernelDefError(def, what + " " + block.ToString() + " must have the rank of " +
                                   whole.ToString() + " and one offset per axis");
  }
  for (int axis = 0; axis < whole.rank(); ++axis) {
    if (offsets[axis] < 0 || offsets[axis] + block.dim(axis) > whole.dim(axis)) {
      return KernelDefError(def, what + " " + block.ToString() + " at offsets " +
                                     Shape(offsets).ToString() + " does not fit in " +
                                     whole.ToString());
    }
  }
  return Status::Ok();
}

// Byte copies between two buffers of `bytes` bytes, parallel over the bytes.
void ParallelCopy(ParallelRunner* runner, const char* from, char* to, int64_t bytes) {
  ParallelFor(runner, bytes, MinChunkFor(1) * 4, [&](int64_t begin, int64_t end) {
    std::memcpy(to + begin, from + begin, static_cast<size_t>(end - begin));
  });
}

// copy: y = x, on another device.
class CopyTransferKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(def).Finish());
    if (def.input_size() != 1 || def.output_size() != 1) {
      return KernelDefError(def, "expects one input and one output");
    }
    SOFTWIRE_ASSIGN_OR_RETURN(DType dtype, CommonDType(def));
    const Shape x = ShapeOf(def.input(0));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), x));
    return std::unique_ptr<Kernel>(new CopyTransferKernel(x.NumElements() * SizeOf(dtype)));
  }

  Status Run(const KernelContext& context) override {
    ParallelCopy(context.parallel, static_cast<const char*>(context.inputs[0].data),
                 static_cast<char*>(context.outputs[0].data), bytes_);
    return Status::Ok();
  }

 private:
  explicit CopyTransferKernel(int64_t bytes) : bytes_(bytes) {}

  const int64_t bytes_;
};

// slice: y = x[begin:end] on every axis.
class SliceKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    KernelAttributes attributes(def);
    const std::vector<int64_t> begin = attributes.RequiredInts("begin");
    const std::vector<int64_t> end = attributes.RequiredInts("end");
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    if (def.input_size() != 1 || def.output_size() != 1) {
      return KernelDefError(def, "expects one input and one output");
    }
    SOFTWIRE_ASSIGN_OR_RETURN(DType dtype, CommonDType(def));
    const Shape x = ShapeOf(def.input(0));
    if (static_cast<int>(begin.size()) != x.rank() || static_cast<int>(end.size()) != x.rank()) {
      return KernelDefError(def, "begin " + Shape(begin).ToString() + " and end " +
                                     Shape(end).ToString() + " need one entry per axis of x " +
                                     x.ToString());
    }
    std::vector<int64_t> dims;
    for (int axis = 0; axis < x.rank(); ++axis) {
      if (begin[axis] < 0 || begin[axis] >= end[axis] || end[axis] > x.dim(axis)) {
        return KernelDefError(
            def, "axis " + std::to_string(axis) + ": [" + std::to_string(begin[axis]) + ", " +
                     std::to_string(end[axis]) + ") is not a non-empty range of [0, " +
                     std::to_string(x.dim(axis)) + ")");
      }
      dims.push_back(end[axis] - begin[axis]);
    }
    const Shape y(dims);
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), y));
    return std::unique_ptr<Kernel>(new SliceKernel(BlockRuns(x, y, begin), SizeOf(dtype)));
  }

  Status Run(const KernelContext& context) override {
    const char* x = static_cast<const char*>(context.inputs[0].data);
    char* y = static_cast<char*>(context.outputs[0].data);
    const int64_t run_bytes = runs_.length() * element_bytes_;
    ParallelFor(context.parallel, runs_.count(), MinChunkFor(runs_.length()),
                [&](int64_t begin, int64_t end) {
                  for (int64_t run = begin; run < end; ++run) {
                    std::memcpy(y + run * run_bytes, x + runs_.WholeOffset(run) * element_bytes_,
                                static_cast<size_t>(run_bytes));
                  }
                });
    return Status::Ok();
  }

 private:
  SliceKernel(BlockRuns runs, int64_t element_bytes)
      : runs_(std::move(runs)), element_bytes_(element_bytes) {}

  const BlockRuns runs_;
  const int64_t element_bytes_;
};

// assemble: y = 0, then y[offset_k : offset_k + shape(x_k)] += x_k for k in order.
class AssembleKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    KernelAttributes attributes(def);
    const Shape y(attributes.RequiredInts("shape"));
    const std::vector<int64_t> offsets = attributes.RequiredInts("offsets");
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    if (def.output_size() != 1) return KernelDefError(def, "expects one output");
    SOFTWIRE_ASSIGN_OR_RETURN(DType dtype, CommonDType(def));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), y));
    if (offsets.size() != static_cast<size_t>(def.input_size()) * y.rank()) {
      return KernelDefError(def, "offsets holds " + std::to_string(offsets.size()) + " entries; " +
                                     std::to_string(def.input_size()) + " inputs of rank " +
                                     std::to_string(y.rank()) + " need " +
                                     std::to_string(def.input_size() * y.rank()));
    }
    std::vector<BlockRuns> blocks;
    for (int k = 0; k < def.input_size(); ++k) {
      const Shape x = ShapeOf(def.input(k));
      const std::vector<int64_t> at(offsets.begin() + k * y.rank(),
                                    offsets.begin() + (k + 1) * y.rank());
      SOFTWIRE_RETURN_IF_ERROR(CheckBlockInside(def, "input x" + std::to_string(k), y, x, at));
      blocks.emplace_back(y, x, at);
    }
    return std::unique_ptr<Kernel>(new AssembleKernel(dtype, y.NumElements(), std::move(blocks)));
  }

  Status Run(const KernelContext& context) override {
    if (dtype_ == DType::kInt32) return Assemble<int32_t>(context);
    if (dtype_ == DType::kBFloat16) return Assemble<BFloat16>(context);
    return Assemble<float>(context);
  }

 private:
  AssembleKernel(DType dtype, int64_t elements, std::vector<BlockRuns> blocks)
      : dtype_(dtype), elements_(elements), blocks_(std::move(blocks)) {}

  // y + x, in T: bfloat16 adds in float32 and rounds once (exact when the blocks do not
  // overlap, which is how the compiler uses assemble on bfloat16: casts never see partial
  // values).
  static int32_t Add(int32_t y, int32_t x) { return y + x; }
  static float Add(float y, float x) { return y + x; }
  static BFloat16 Add(BFloat16 y, BFloat16 x) { return ToBFloat16(ToFloat(y) + ToFloat(x)); }

  template <typename T>
  Status Assemble(const KernelContext& context) {
    T* y = static_cast<T*>(context.outputs[0].data);
    ParallelFor(context.parallel, elements_, MinChunkFor(1),
                [&](int64_t begin, int64_t end) { std::fill(y + begin, y + end, T{}); });
    for (size_t k = 0; k < blocks_.size(); ++k) {
      const T* x = static_cast<const T*>(context.inputs[k].data);
      const BlockRuns& runs = blocks_[k];
      const int64_t length = runs.length();
      ParallelFor(context.parallel, runs.count(), MinChunkFor(length),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t run = begin; run < end; ++run) {
                      T* target = y + runs.WholeOffset(run);
                      const T* source = x + run * length;
                      for (int64_t i = 0; i < length; ++i) target[i] = Add(target[i], source[i]);
                    }
                  });
    }
    return Status::Ok();
  }

  const DType dtype_;
  const int64_t elements_;
  const std::vector<BlockRuns> blocks_;  // Per input.
};

// flat_split (x -> chunks) and flat_concat (chunks -> y): byte copies of consecutive chunks.
class FlatChunksKernel final : public Kernel {
 public:
  // flat_split: y_k is the k-th chunk of flatten(x), of sizes[k] elements.
  static StatusOr<std::unique_ptr<Kernel>> CreateSplit(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    KernelAttributes attributes(def);
    const std::vector<int64_t> sizes = attributes.RequiredInts("sizes");
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    if (def.input_size() != 1 || def.output_size() < 1) {
      return KernelDefError(def, "expects one input and at least one output");
    }
    SOFTWIRE_ASSIGN_OR_RETURN(DType dtype, CommonDType(def));
    SOFTWIRE_RETURN_IF_ERROR(
        CheckChunks(def, sizes, ShapeOf(def.input(0)), def.output(), "output y"));
    return std::unique_ptr<Kernel>(new FlatChunksKernel(/*split=*/true, sizes, SizeOf(dtype)));
  }

  // flat_concat: y = reshape(concat(x_0, ..., x_{n-1}), shape).
  static StatusOr<std::unique_ptr<Kernel>> CreateConcat(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    KernelAttributes attributes(def);
    const Shape y(attributes.RequiredInts("shape"));
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    if (def.input_size() < 1 || def.output_size() != 1) {
      return KernelDefError(def, "expects at least one input and one output");
    }
    SOFTWIRE_ASSIGN_OR_RETURN(DType dtype, CommonDType(def));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), y));
    std::vector<int64_t> sizes;
    for (const proto::TensorDesc& input : def.input()) {
      sizes.push_back(ShapeOf(input).NumElements());
    }
    SOFTWIRE_RETURN_IF_ERROR(CheckChunks(def, sizes, y, def.input(), "input x"));
    return std::unique_ptr<Kernel>(new FlatChunksKernel(/*split=*/false, sizes, SizeOf(dtype)));
  }

  Status Run(const KernelContext& context) override {
    int64_t at = 0;
    for (size_t k = 0; k < sizes_.size(); ++k) {
      const int64_t bytes = sizes_[k] * element_bytes_;
      if (split_) {
        ParallelCopy(context.parallel, static_cast<const char*>(context.inputs[0].data) + at,
                     static_cast<char*>(context.outputs[k].data), bytes);
      } else {
        ParallelCopy(context.parallel, static_cast<const char*>(context.inputs[k].data),
                     static_cast<char*>(context.outputs[0].data) + at, bytes);
      }
      at += bytes;
    }
    return Status::Ok();
  }

 private:
  FlatChunksKernel(bool split, std::vector<int64_t> sizes, int64_t element_bytes)
      : split_(split), sizes_(std::move(sizes)), element_bytes_(element_bytes) {}

  // Every chunk is 1-D of its size, and the sizes add up to the elements of `whole`.
  static Status CheckChunks(const proto::KernelDef& def, const std::vector<int64_t>& sizes,
                            const Shape& whole,
                            const google::protobuf::RepeatedPtrField<proto::TensorDesc>& chunks,
                            const std::string& role) {
    if (static_cast<int>(sizes.size()) != chunks.size()) {
      return KernelDefError(def, "sizes " + Shape(sizes).ToString() + " name " +
                                     std::to_string(sizes.size()) + " chunks, the kernel has " +
                                     std::to_string(chunks.size()));
    }
    int64_t total = 0;
    for (size_t k = 0; k < sizes.size(); ++k) {
      if (sizes[k] < 0) return KernelDefError(def, "sizes must not be negative");
      SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, role + std::to_string(k),
                                          ShapeOf(chunks.Get(static_cast<int>(k))),
                                          Shape({sizes[k]})));
      total += sizes[k];
    }
    if (total != whole.NumElements()) {
      return KernelDefError(def, "chunks hold " + std::to_string(total) + " elements, " +
                                     whole.ToString() + " holds " +
                                     std::to_string(whole.NumElements()));
    }
    return Status::Ok();
  }

  const bool split_;
  const std::vector<int64_t> sizes_;  // Elements per chunk.
  const int64_t element_bytes_;
};

}  // namespace

void RegisterTransferKernels(KernelRegistry* registry) {
  registry->Register("copy", CopyTransferKernel::Create);
  registry->Register("slice", SliceKernel::Create);
  registry->Register("assemble", AssembleKernel::Create);
  registry->Register("flat_split", FlatChunksKernel::CreateSplit);
  registry->Register("flat_concat", FlatChunksKernel::CreateConcat);
}

}  // namespace runtime
}  // namespace softwire
