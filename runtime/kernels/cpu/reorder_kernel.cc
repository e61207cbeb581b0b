// reorder (docs/OPS.md): an image batch [N, C, H, W] copied from one layout of base/layout.h
// into another (float32 or bfloat16, the same on both sides). The compiler's choose_layouts
// pass inserts it where layouts meet (docs/LAYOUTS.md). Parallel over the images; the inner
// loop runs along the output's memory.
#include <cstring>
#include <memory>

#include "base/bfloat16.h"
#include "base/layout.h"
#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

class ReorderKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    KernelAttributes attributes(def);
    const std::string name = attributes.RequiredString("layout");
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    StatusOr<Layout> layout = ParseLayout(name);
    if (!layout.ok()) return KernelDefError(def, layout.status().message());
    if (def.input_size() != 1 || def.output_size() != 1) {
      return KernelDefError(def, "expects one input and one output");
    }
    const DType dtype = DTypeOf(def.input(0));
    if (dtype != DType::kFloat32 && dtype != DType::kBFloat16) {
      return KernelDefError(def, "x must be float32 or bfloat16");
    }
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"x"}, {dtype}, {"y"}, {dtype}));
    const Shape x = ShapeOf(def.input(0));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), x));
    const Layout from = LayoutOf(def.input(0));
    const Layout to = LayoutOf(def.output(0));
    if (to != *layout) return KernelDefError(def, "y's layout is not the attribute's " + name);
    if (!LayoutFits(from, x) || !LayoutFits(to, x) || x.rank() != 4) {
      return KernelDefError(def, "x " + x.ToString() + " cannot be reordered from " +
                                     LayoutName(from) + " to " + LayoutName(to));
    }
    return std::unique_ptr<Kernel>(new ReorderKernel(
        ImageLayout::Of(from, x), ImageLayout::Of(to, x), static_cast<int>(SizeOf(dtype))));
  }

  Status Run(const KernelContext& context) override {
    const void* x = context.inputs[0].data;
    void* y = context.outputs[0].data;
    ParallelFor(context.parallel, from_.batch, MinChunkFor(from_.image),
                [&](int64_t begin, int64_t end) {
                  if (element_bytes_ == 4) {
                    Copy(static_cast<const float*>(x), static_cast<float*>(y), begin, end);
                  } else {
                    Copy(static_cast<const BFloat16*>(x), static_cast<BFloat16*>(y), begin, end);
                  }
                });
    return Status::Ok();
  }

 private:
  ReorderKernel(ImageLayout from, ImageLayout to, int element_bytes)
      : from_(from), to_(to), element_bytes_(element_bytes) {}

  template <typename T>
  void Copy(const T* x, T* y, int64_t begin, int64_t end) const {
    const int64_t block = to_.block;
    for (int64_t n = begin; n < end; ++n) {
      T* out = y + n * to_.image;
      for (int64_t cb = 0; cb < to_.channels / block; ++cb) {
        for (int64_t s = 0; s < to_.spatial; ++s) {
          for (int64_t ci = 0; ci < block; ++ci) {
            out[cb * to_.block_stride + s * block + ci] = x[from_.Offset(n, cb * block + ci, s)];
          }
        }
      }
    }
  }

  const ImageLayout from_;
  const ImageLayout to_;
  const int element_bytes_;
};

}  // namespace

void RegisterReorderKernel(KernelRegistry* registry) {
  registry->Register("reorder", ReorderKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
