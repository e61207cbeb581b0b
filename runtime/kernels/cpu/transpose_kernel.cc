// transpose: y.shape[i] = x.shape[perm[i]], for float32 and int32 (moved as 4-byte words).
//
// The plan, built once, drops axes of extent 1 and merges output axes that are also adjacent,
// in order, in the input. Then:
// - the last output axis is contiguous in the input (e.g. [B, T, H, D] -> [B, H, T, D]): every
//   output row is one contiguous copy; parallel over rows.
// - otherwise (e.g. a matrix transpose): the output's last axis and the input's last axis form
//   a 2-D transpose per combination of the other axes, done in 32 x 32 tiles so that reads and
//   writes both stay within a few cache lines; parallel over (combination, band of 32 rows).
#include <algorithm>
#include <cstring>
#include <memory>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

using Word = uint32_t;
constexpr int64_t kTile = 32;

// Axes walked by a flat index, with the input and output stride of each.
struct Walk {
  std::vector<int64_t> dims;
  std::vector<int64_t> input_strides;
  std::vector<int64_t> output_strides;

  int64_t count() const {
    int64_t product = 1;
    for (int64_t extent : dims) product *= extent;
    return product;
  }
  void Offsets(int64_t index, int64_t* input, int64_t* output) const {
    *input = 0;
    *output = 0;
    for (int axis = static_cast<int>(dims.size()) - 1; axis >= 0 && index > 0; --axis) {
      int64_t position = index % dims[axis];
      index /= dims[axis];
      *input += position * input_strides[axis];
      *output += position * output_strides[axis];
    }
  }
};

class TransposeKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    KernelAttributes attributes(def);
    std::vector<int64_t> perm = attributes.RequiredInts("perm");
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    if (def.input_size() != 1 || def.output_size() != 1) {
      return KernelDefError(def, "expects one input and one output");
    }
    DType dtype = DTypeOf(def.input(0));
    if (dtype != DType::kFloat32 && dtype != DType::kInt32) {
      return KernelDefError(def, "x must be float32 or int32");
    }
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"x"}, {dtype}, {"y"}, {dtype}));
    Shape x = ShapeOf(def.input(0));
    if (static_cast<int>(perm.size()) != x.rank()) {
      return KernelDefError(def, "perm has " + std::to_string(perm.size()) + " entries but x " +
                                     x.ToString() + " has rank " + std::to_string(x.rank()));
    }
    std::vector<bool> used(x.rank(), false);
    std::vector<int64_t> y_dims;
    for (int64_t axis : perm) {
      if (axis < 0 || axis >= x.rank() || used[axis]) {
        return KernelDefError(def, "perm " + Shape(perm).ToString() +
                                       " is not a permutation of the axes of " + x.ToString());
      }
      used[axis] = true;
      y_dims.push_back(x.dim(static_cast<int>(axis)));
    }
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), Shape(y_dims)));
    return std::unique_ptr<Kernel>(new TransposeKernel(x, perm));
  }

  Status Run(const KernelContext& context) override {
    const Word* x = static_cast<const Word*>(context.inputs[0].data);
    Word* y = static_cast<Word*>(context.outputs[0].data);
    if (elements_ == 0) return Status::Ok();
    if (inner_input_stride_ == 1) {
      CopyRows(context.parallel, x, y);
    } else {
      TransposeTiles(context.parallel, x, y);
    }
    return Status::Ok();
  }

 private:
  TransposeKernel(const Shape& x, const std::vector<int64_t>& perm) {
    elements_ = x.NumElements();
    std::vector<int64_t> input_strides(x.rank());
    int64_t stride = 1;
    for (int axis = x.rank() - 1; axis >= 0; --axis) {
      input_strides[axis] = stride;
      stride *= x.dim(axis);
    }
    // Output axes without extent-1 ones, merged where the input has them adjacent in order.
    std::vector<int64_t> dims;
    std::vector<int64_t> strides;  // Input stride of each merged output axis.
    int64_t previous_axis = -2;
    for (int64_t axis : perm) {
      int64_t extent = x.dim(static_cast<int>(axis));
      if (extent == 1) continue;
      if (!dims.empty() && axis == previous_axis + 1) {
        dims.back() *= extent;
        strides.back() = input_strides[axis];
      } else {
        dims.push_back(extent);
        strides.push_back(input_strides[axis]);
      }
      previous_axis = axis;
    }
    if (dims.empty()) {
      dims.push_back(1);
      strides.push_back(1);
    }
    std::vector<int64_t> output_strides(dims.size());
    stride = 1;
    for (int axis = static_cast<int>(dims.size()) - 1; axis >= 0; --axis) {
      output_strides[axis] = stride;
      stride *= dims[axis];
    }
    const int last = static_cast<int>(dims.size()) - 1;
    inner_length_ = dims[last];
    inner_input_stride_ = strides[last];
    // The output axis holding the input's last axis (input stride 1), when it is not the last.
    int band_axis = last;
    for (int axis = 0; axis < last; ++axis) {
      if (strides[axis] == 1) band_axis = axis;
    }
    band_length_ = dims[band_axis];
    band_output_stride_ = output_strides[band_axis];
    for (int axis = 0; axis < last; ++axis) {
      if (inner_input_stride_ != 1 && axis == band_axis) continue;
      outer_.dims.push_back(dims[axis]);
      outer_.input_strides.push_back(strides[axis]);
      outer_.output_strides.push_back(output_strides[axis]);
    }
  }

  // Last output axis contiguous in the input: one copy per output row.
  void CopyRows(ParallelRunner* parallel, const Word* x, Word* y) const {
    const int64_t length = inner_length_;
    ParallelFor(parallel, outer_.count(), MinChunkFor(length), [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        int64_t input = 0;
        int64_t output = 0;
        outer_.Offsets(row, &input, &output);
        std::memcpy(y + output, x + input, sizeof(Word) * static_cast<size_t>(length));
      }
    });
  }

  // y[band b, inner i] = x[b + i * inner_input_stride] per outer combination, in tiles.
  void TransposeTiles(ParallelRunner* parallel, const Word* x, Word* y) const {
    const int64_t bands = (band_length_ + kTile - 1) / kTile;
    ParallelFor(parallel, outer_.count() * bands, MinChunkFor(kTile * inner_length_),
                [&](int64_t begin, int64_t end) {
                  for (int64_t item = begin; item < end; ++item) {
                    int64_t input = 0;
                    int64_t output = 0;
                    outer_.Offsets(item / bands, &input, &output);
                    const int64_t band_begin = (item % bands) * kTile;
                    const int64_t band_end = std::min(band_length_, band_begin + kTile);
                    for (int64_t i0 = 0; i0 < inner_length_; i0 += kTile) {
                      const int64_t i_end = std::min(inner_length_, i0 + kTile);
                      for (int64_t b = band_begin; b < band_end; ++b) {
                        const Word* source = x + input + b;
                        Word* target = y + output + b * band_output_stride_;
                        for (int64_t i = i0; i < i_end; ++i) {
                          target[i] = source[i * inner_input_stride_];
                        }
                      }
                    }
                  }
                });
  }

  int64_t elements_ = 0;
  int64_t inner_length_ = 1;        // Extent of the last merged output axis.
  int64_t inner_input_stride_ = 1;  // Its stride in the input.
  int64_t band_length_ = 1;         // Extent of the output axis that is the input's last.
  int64_t band_output_stride_ = 1;  // Its stride in the output.
  Walk outer_;                      // The remaining output axes.
};

}  // namespace

void RegisterTransposeKernel(KernelRegistry* registry) {
  registry->Register("transpose", TransposeKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
