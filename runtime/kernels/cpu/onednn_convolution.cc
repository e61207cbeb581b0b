#include "runtime/kernels/cpu/onednn_convolution.h"

#include <algorithm>
#include <vector>

#include "base/bfloat16.h"
#include "base/cpu_features.h"
#include "runtime/kernels/cpu/parallel_for.h"

#ifdef SOFTWIRE_HAVE_DNNL
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include "runtime/kernels/cpu/onednn_threads.h"
#include "runtime/kernels/cpu/thread_buffers.h"
#endif

namespace softwire {
namespace runtime {

#ifdef SOFTWIRE_HAVE_DNNL
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// Lanes the batch is cut into: enough for the device threads of these machines.
// At most this many lanes, whatever the device's threads: the filter gradient sums its lanes'
// gradients, so the lanes must not depend on the threads for a convolution to compute the same
// values on a 1-core device of a dp 2 layout as on the 2-core device of one (the fashion demo's
// dp check holds them to 1e-5). Two, because each lane of backward weights is a filter gradient
// of its own and oneDNN takes about as long for a lane of 16 images as for one of 32: ResNet-20
// bf16 on 2 threads, filter gradients per step 73 ms in 2 lanes, 153 ms in 4, 261 ms in 8.
constexpr int64_t kMaxLanes = 2;

// One operand of a lane: `user` points at the slot (plain NCHW / OIHW), `internal` is what
// the primitive reads or writes. Where oneDNN chose another layout (its blocked formats, which
// its fastest kernels need) `internal` lives in `bytes` and `reorder` converts on the way in
// (inputs) or out (the output); else both are the same memory object.
struct Operand {
  memory user;
  memory internal;  // When reordered, its bytes are ThreadBuffer's, set per execution.
  size_t bytes = 0;
  ThreadBufferUse use = ThreadBufferUse::kOperandA;
  dnnl::primitive reorder;
  bool reordered = false;
};

// One lane: images [begin, begin + count) of the batch, with everything its execution needs.
struct Lane {
  int64_t begin = 0;
  int64_t count = 0;
  dnnl::primitive primitive;
  Operand a;
  Operand b;
  memory bias;
  Operand out;
  memory scratchpad;  // Its bytes: ThreadBuffer's, set per execution.
  size_t scratchpad_bytes = 0;
  std::vector<float> partial;  // Backward weights, lanes after the first: their dw.
  dnnl::stream stream;
};

class Convolution final : public OneDnnConvolution {
 public:
  Convolution(ConvolutionPass pass, const ConvolutionShape& shape, bool widen)
      : pass_(pass), shape_(shape), widen_(widen), engine_(dnnl::engine::kind::cpu, 0) {}

  void MakeLanes() {
    const int64_t batch = shape_.x.dim(0);
    const int64_t lanes = std::clamp<int64_t>(batch, 1, kMaxLanes);
    const int64_t per_lane = (batch + lanes - 1) / lanes;
    std::vector<std::pair<int64_t, dnnl::primitive_desc>> descriptors;
    for (int64_t begin = 0; begin < batch; begin += per_lane) {
      Lane lane;
      lane.begin = begin;
      lane.count = std::min(per_lane, batch - begin);
      dnnl::primitive_desc* descriptor = nullptr;
      for (auto& known : descriptors) {
        if (known.first == lane.count) descriptor = &known.second;
      }
      if (descriptor == nullptr) {
        descriptors.emplace_back(lane.count, Describe(lane.count));
        descriptor = &descriptors.back().second;
        if (implementation_.empty()) implementation_ = descriptor->impl_info_str();
      }
      MakeLane(*descriptor, lane);
      lanes_.push_back(std::move(lane));
    }
    if (widen_) {
      a_wide_.resize(InputElements(0));
      b_wide_.resize(InputElements(1));
      if (shape_.output_dtype == DType::kBFloat16) {
        out_wide_.resize(static_cast<size_t>(
            (pass_ == ConvolutionPass::kForward ? shape_.y : shape_.x).NumElements()));
      }
    }
  }

  void Run(ParallelRunner* parallel, const void* a, const void* b, const float* bias,
           void* out) override {
    void* const slot = out;
    if (widen_) {
      Widen(parallel, static_cast<const BFloat16*>(a), a_wide_.data(), a_wide_.size());
      Widen(parallel, static_cast<const BFloat16*>(b), b_wide_.data(), b_wide_.size());
      a = a_wide_.data();
      b = b_wide_.data();
      if (!out_wide_.empty()) out = out_wide_.data();
    }
    const int64_t work = shape_.y.NumElements() * shape_.w.NumElements() / shape_.w.dim(0);
    ParallelFor(parallel, static_cast<int64_t>(lanes_.size()),
                std::max<int64_t>(1, MinChunkFor(work / static_cast<int64_t>(lanes_.size()))),
                [&](int64_t begin, int64_t end) {
                  omp_set_num_threads(1);
                  for (int64_t index = begin; index < end; ++index) {
                    RunLane(lanes_[index], a, b, bias, out);
                  }
                });
    if (pass_ == ConvolutionPass::kBackwardWeights) SumLanes(parallel, static_cast<float*>(out));
    if (out != slot) Narrow(parallel, out_wide_.data(), static_cast<BFloat16*>(slot));
  }

  std::string implementation() const override {
    return implementation_ + (widen_ ? " (bf16 widened to float32)" : "");
  }

 private:
  static void Widen(ParallelRunner* parallel, const BFloat16* from, float* to, size_t count) {
    ParallelFor(parallel, static_cast<int64_t>(count), MinChunkFor(1),
                [&](int64_t begin, int64_t end) {
                  for (int64_t i = begin; i < end; ++i) to[i] = ToFloat(from[i]);
                });
  }

  void Narrow(ParallelRunner* parallel, const float* from, BFloat16* to) const {
    ParallelFor(parallel, static_cast<int64_t>(out_wide_.size()), MinChunkFor(1),
                [&](int64_t begin, int64_t end) {
                  for (int64_t i = begin; i < end; ++i) to[i] = ToBFloat16(from[i]);
                });
  }

  // Elements of product input 0 (a) or 1 (b).
  size_t InputElements(int input) const {
    const Shape& image = pass_ == ConvolutionPass::kForward ? shape_.x : shape_.y;
    if (input == 0) return static_cast<size_t>(image.NumElements());
    return static_cast<size_t>(
        (pass_ == ConvolutionPass::kBackwardWeights ? shape_.x : shape_.w).NumElements());
  }

  memory::data_type InputType() const {
    return shape_.input_dtype == DType::kBFloat16 && !widen_ ? memory::data_type::bf16
                                                             : memory::data_type::f32;
  }

  // Of y (forward) or dx (backward data) as the primitive writes them.
  memory::data_type OutputType() const {
    return shape_.output_dtype == DType::kBFloat16 && !widen_ ? memory::data_type::bf16
                                                              : memory::data_type::f32;
  }

  // x, y ([count, ...]) and w descriptors, the weights grouped ([G, O / G, C / G, KH, KW]):
  // the slots' layout, or for the primitive (any = true) `any` where the slot is plain, so
  // oneDNN chooses, and the slot's own layout where the compiler chose one.
  static Tag TagOf(Layout layout) {
    switch (layout) {
      case Layout::kNhwc:
        return Tag::nhwc;
      case Layout::kNChw16c:
        return Tag::nChw16c;
      case Layout::kPlain:
        break;
    }
    return Tag::nchw;
  }
  // A plain operand beside an NHWC one is described as NHWC too (reordered in the lane):
  // oneDNN 2.6 has only its reference kernel for NCHW or `any` beside NHWC.
  memory::desc Images(const Shape& shape, Layout layout, int64_t count, memory::data_type type,
                      bool any = true) const {
    Tag tag = TagOf(layout);
    if (any && layout == Layout::kPlain) {
      const bool beside_nhwc = shape_.x_layout == Layout::kNhwc || shape_.y_layout == Layout::kNhwc;
      tag = beside_nhwc ? Tag::nhwc : Tag::any;
    }
    return memory::desc({count, shape.dim(1), shape.dim(2), shape.dim(3)}, type, tag);
  }
  memory::desc Weights(memory::data_type type, bool any = true) const {
    const Shape& w = shape_.w;
    if (shape_.groups == 1) {
      return memory::desc({w.dim(0), w.dim(1), w.dim(2), w.dim(3)}, type,
                          any ? Tag::any : Tag::oihw);
    }
    return memory::desc({shape_.groups, w.dim(0) / shape_.groups, w.dim(1), w.dim(2), w.dim(3)},
                        type, any ? Tag::any : Tag::goihw);
  }

  dnnl::primitive_desc Describe(int64_t count) const {
    const ImageWindow& win = shape_.window;
    const memory::dims strides = {win.stride[0], win.stride[1]};
    const memory::dims dilates = {win.dilation[0] - 1, win.dilation[1] - 1};  // oneDNN: extra gaps.
    const memory::dims padding = {win.padding[0], win.padding[1]};
    const memory::data_type in = InputType();
    const memory::data_type f32 = memory::data_type::f32;
    const memory::data_type out = OutputType();
    // The forward pass writes `out`; as the backward passes' hint its dst type is the one
    // their diff_dst has (`in`).
    const memory::data_type y_type = pass_ == ConvolutionPass::kForward ? out : f32;
    dnnl::primitive_attr attributes;
    attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const memory::desc bias({shape_.w.dim(0)}, f32, Tag::x);
    // The backward passes need the forward pass's descriptor as a hint.
    dnnl::convolution_forward::desc forward_desc =
        shape_.has_bias
            ? dnnl::convolution_forward::desc(
                  dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                  Images(shape_.x, shape_.x_layout, count, in), Weights(in), bias,
                  Images(shape_.y, shape_.y_layout, count, y_type), strides, dilates, padding,
                  padding)
            : dnnl::convolution_forward::desc(
                  dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                  Images(shape_.x, shape_.x_layout, count, in), Weights(in),
                  Images(shape_.y, shape_.y_layout, count, y_type), strides, dilates, padding,
                  padding);
    dnnl::convolution_forward::primitive_desc forward(forward_desc, attributes, engine_);
    switch (pass_) {
      case ConvolutionPass::kForward:
        return forward;
      case ConvolutionPass::kBackwardData:
        return dnnl::convolution_backward_data::primitive_desc(
            dnnl::convolution_backward_data::desc(
                dnnl::algorithm::convolution_direct, Images(shape_.x, shape_.x_layout, count, out),
                Weights(in), Images(shape_.y, shape_.y_layout, count, in), strides, dilates,
                padding, padding),
            attributes, engine_, forward);
      case ConvolutionPass::kBackwardWeights:
        return dnnl::convolution_backward_weights::primitive_desc(
            dnnl::convolution_backward_weights::desc(
                dnnl::algorithm::convolution_direct, Images(shape_.x, shape_.x_layout, count, in),
                Weights(f32), Images(shape_.y, shape_.y_layout, count, in), strides, dilates,
                padding, padding),
            attributes, engine_, forward);
    }
    return forward;
  }

  // `internal` as the primitive wants it, `user` as the slots hold it.
  Operand MakeOperand(const memory::desc& internal, const memory::desc& user, bool output,
                      ThreadBufferUse use) const {
    Operand operand;
    operand.user = memory(user, engine_, DNNL_MEMORY_NONE);
    if (internal == user) {
      operand.internal = operand.user;
      return operand;
    }
    operand.bytes = internal.get_size();
    operand.use = use;
    operand.internal = memory(internal, engine_, DNNL_MEMORY_NONE);
    operand.reorder = output ? dnnl::reorder(operand.internal, operand.user)
                             : dnnl::reorder(operand.user, operand.internal);
    operand.reordered = true;
    return operand;
  }

  void MakeLane(const dnnl::primitive_desc& descriptor, Lane& lane) const {
    const memory::data_type in = InputType();
    const memory::data_type f32 = memory::data_type::f32;
    const memory::data_type out = OutputType();
    const int64_t count = lane.count;
    lane.primitive = dnnl::primitive(descriptor);
    switch (pass_) {
      case ConvolutionPass::kForward:
        lane.a =
            MakeOperand(descriptor.src_desc(), Images(shape_.x, shape_.x_layout, count, in, false),
                        false, ThreadBufferUse::kOperandA);
        lane.b = MakeOperand(descriptor.weights_desc(), Weights(in, false), false,
                             ThreadBufferUse::kOperandB);
        lane.out =
            MakeOperand(descriptor.dst_desc(), Images(shape_.y, shape_.y_layout, count, out, false),
                        true, ThreadBufferUse::kOperandOut);
        if (shape_.has_bias) {
          lane.bias =
              memory(descriptor.query_md(dnnl::query::weights_md, 1), engine_, DNNL_MEMORY_NONE);
        }
        break;
      case ConvolutionPass::kBackwardData:
        lane.a = MakeOperand(descriptor.diff_dst_desc(),
                             Images(shape_.y, shape_.y_layout, count, in, false), false,
                             ThreadBufferUse::kOperandA);
        lane.b = MakeOperand(descriptor.weights_desc(), Weights(in, false), false,
                             ThreadBufferUse::kOperandB);
        lane.out = MakeOperand(descriptor.diff_src_desc(),
                               Images(shape_.x, shape_.x_layout, count, out, false), true,
                               ThreadBufferUse::kOperandOut);
        break;
      case ConvolutionPass::kBackwardWeights:
        lane.a = MakeOperand(descriptor.diff_dst_desc(),
                             Images(shape_.y, shape_.y_layout, count, in, false), false,
                             ThreadBufferUse::kOperandA);
        lane.b =
            MakeOperand(descriptor.src_desc(), Images(shape_.x, shape_.x_layout, count, in, false),
                        false, ThreadBufferUse::kOperandB);
        lane.out = MakeOperand(descriptor.diff_weights_desc(), Weights(f32, false), true,
                               ThreadBufferUse::kOperandOut);
        if (lane.begin > 0) lane.partial.resize(static_cast<size_t>(shape_.w.NumElements()));
        break;
    }
    lane.scratchpad_bytes = descriptor.scratchpad_desc().get_size();
    lane.scratchpad = memory(descriptor.scratchpad_desc(), engine_, DNNL_MEMORY_NONE);
    lane.stream = dnnl::stream(engine_);
  }

  static void Reorder(const Operand& operand, dnnl::stream& stream, bool output) {
    if (!operand.reordered) return;
    dnnl_exec_arg_t arguments[] = {
        {DNNL_ARG_FROM, (output ? operand.internal : operand.user).get()},
        {DNNL_ARG_TO, (output ? operand.user : operand.internal).get()}};
    dnnl_primitive_execute(operand.reorder.get(), stream.get(), 2, arguments);
  }

  void RunLane(Lane& lane, const void* a, const void* b, const float* bias, void* out) const {
    const size_t in_size = shape_.input_dtype == DType::kBFloat16 && !widen_ ? 2 : 4;
    const size_t out_size = OutputType() == memory::data_type::bf16 ? 2 : 4;
    auto at = [&](int64_t elements) { return static_cast<char*>(out) + elements * out_size; };
    const int64_t x_image = shape_.x.NumElements(1, 4);
    const int64_t y_image = shape_.y.NumElements(1, 4);
    auto offset = [&](const void* base, int64_t elements) {
      return const_cast<char*>(static_cast<const char*>(base) + elements * in_size);
    };
    int a_argument = DNNL_ARG_SRC, b_argument = DNNL_ARG_WEIGHTS, out_argument = DNNL_ARG_DST;
    switch (pass_) {
      case ConvolutionPass::kForward:
        lane.a.user.set_data_handle(offset(a, lane.begin * x_image));
        lane.b.user.set_data_handle(const_cast<void*>(b));
        lane.out.user.set_data_handle(at(lane.begin * y_image));
        break;
      case ConvolutionPass::kBackwardData:
        a_argument = DNNL_ARG_DIFF_DST;
        out_argument = DNNL_ARG_DIFF_SRC;
        lane.a.user.set_data_handle(offset(a, lane.begin * y_image));
        lane.b.user.set_data_handle(const_cast<void*>(b));
        lane.out.user.set_data_handle(at(lane.begin * x_image));
        break;
      case ConvolutionPass::kBackwardWeights:
        a_argument = DNNL_ARG_DIFF_DST;
        b_argument = DNNL_ARG_SRC;
        out_argument = DNNL_ARG_DIFF_WEIGHTS;
        lane.a.user.set_data_handle(offset(a, lane.begin * y_image));
        lane.b.user.set_data_handle(offset(b, lane.begin * x_image));
        lane.out.user.set_data_handle(lane.partial.empty() ? out : lane.partial.data());
        break;
    }
    for (Operand* operand : {&lane.a, &lane.b, &lane.out}) {
      if (operand->reordered) {
        operand->internal.set_data_handle(ThreadBuffer(operand->use, operand->bytes));
      }
    }
    lane.scratchpad.set_data_handle(
        ThreadBuffer(ThreadBufferUse::kScratchpad, lane.scratchpad_bytes));
    Reorder(lane.a, lane.stream, false);
    Reorder(lane.b, lane.stream, false);
    dnnl_exec_arg_t arguments[5] = {{a_argument, lane.a.internal.get()},
                                    {b_argument, lane.b.internal.get()},
                                    {out_argument, lane.out.internal.get()},
                                    {DNNL_ARG_SCRATCHPAD, lane.scratchpad.get()}};
    int count = 4;
    if (shape_.has_bias) {
      lane.bias.set_data_handle(const_cast<float*>(bias));
      arguments[count++] = {DNNL_ARG_BIAS, lane.bias.get()};
    }
    dnnl_primitive_execute(lane.primitive.get(), lane.stream.get(), count, arguments);
    Reorder(lane.out, lane.stream, true);
  }

  // dw = the first lane's dw plus the others', in lane order (the same sum whatever the
  // threads).
  void SumLanes(ParallelRunner* parallel, float* out) const {
    const int64_t count = shape_.w.NumElements();
    ParallelFor(parallel, count, MinChunkFor(static_cast<int64_t>(lanes_.size())),
                [&](int64_t begin, int64_t end) {
                  for (size_t lane = 1; lane < lanes_.size(); ++lane) {
                    const float* partial = lanes_[lane].partial.data();
                    for (int64_t i = begin; i < end; ++i) out[i] += partial[i];
                  }
                });
  }

  const ConvolutionPass pass_;
  const ConvolutionShape shape_;
  const bool widen_;  // bf16 inputs on a cpu without native bf16.
  dnnl::engine engine_;
  std::vector<Lane> lanes_;
  std::vector<float> a_wide_;
  std::vector<float> b_wide_;
  std::vector<float> out_wide_;  // Widened inputs, bf16 output: the float32 result first.
  std::string implementation_;
};

}  // namespace

StatusOr<std::unique_ptr<OneDnnConvolution>> OneDnnConvolution::Create(
    ConvolutionPass pass, const ConvolutionShape& shape) {
  // bf16 runs natively where the CPU has it, backward weights included: made for one thread
  // (below), oneDNN 2.6's bf16 filter gradient is faster than its float32 one on ResNet-20's
  // shapes and needs no widening pass (it was widened while the primitives were made for the
  // machine's cores, which slowed the bf16 kernel 10x: docs/DECISIONS.md, "Filter gradients").
  const bool widen = shape.input_dtype == DType::kBFloat16 && !DetectCpuFeatures().native_bf16();
  auto convolution = std::make_unique<Convolution>(pass, shape, widen);
  // Made for the one thread each lane runs on, whatever the machine's cores.
  const OneDnnOneThread one_thread;
  try {
    convolution->MakeLanes();
  } catch (const dnnl::error& error) {
    return InvalidArgumentError(std::string("oneDNN rejects the convolution: ") + error.what());
  }
  return std::unique_ptr<OneDnnConvolution>(std::move(convolution));
}

#else

StatusOr<std::unique_ptr<OneDnnConvolution>> OneDnnConvolution::Create(ConvolutionPass,
                                                                       const ConvolutionShape&) {
  return UnimplementedError(
      "convolutions run through oneDNN, which this build lacks (install libdnnl-dev)");
}

#endif

}  // namespace runtime
}  // namespace softwire
