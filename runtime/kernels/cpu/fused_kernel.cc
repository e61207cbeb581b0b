// fused (docs/OPS.md): a chain of element-wise ops (proto/fused_program.h) in one pass over
// memory, the kernel of the actors the compiler's fuse_elementwise pass makes.
//
// A small interpreter over blocks: the flat range [0, N) is cut into blocks of kBlock elements
// that stay in L1; per block, inputs that are not float32 read whole (bfloat16, or repeated:
// a bias, a broadcast operand) are first staged into a float32 block, then each statement runs
// as one plain loop over the block (the per-element functions of the unfused kernels,
// elementwise_functions.h, so that results match theirs), and last the outputs are stored, to
// bfloat16 where the output is. Every input element is read, and every output element written,
// once; intermediate values never leave the block.
//
// In place: the compiler may lay an output over an input of the same type it reads whole (plan/
// register_lifetimes.h KernelMayWriteOver). That is safe here because a block's outputs are
// stored only after every statement of the block has read its inputs, and element i is read
// and written only by the block that holds it.
//
// Parallelism: blocks are split over the device's threads in flat chunks (ParallelFor); each
// thread keeps its blocks on its own stack.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/bfloat16.h"
#include "proto/fused_program.h"
#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/elementwise_functions.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

// Elements per block: kMaxBuffers blocks of 512 floats (2 KiB each) stay within L1.
constexpr int64_t kBlock = 512;
// Statement values plus staged inputs a program may use: 24 x 2 KiB of stack per thread.
constexpr size_t kMaxBuffers = 24;

// Where a statement's operand lives during a block.
struct Source {
  enum Kind { kInput, kBuffer } kind = kInput;
  int index = 0;  // Kernel input (read in place) or buffer.
};

// An input that is staged into a buffer per block: bfloat16 (widened) or repeated (period < N).
struct StagedInput {
  int input = 0;
  int buffer = 0;
  bool bfloat16 = false;
  int64_t period = 0;
};

struct CompiledStep {
  FusedOp op = FusedOp::kRelu;
  std::vector<Source> operands;
  int buffer = 0;  // Where its value goes.
  float factor = 1;
  DType dtype = DType::kFloat32;
};

struct CompiledOutput {
  int buffer = 0;
  bool bfloat16 = false;
};

class FusedKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    KernelAttributes attributes(def);
    const std::string text = attributes.RequiredString("program");
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    StatusOr<FusedProgram> program = ParseFusedProgram(text);
    if (!program.ok()) return KernelDefError(def, program.status().message());
    std::vector<Shape> shapes;
    std::vector<DType> dtypes;
    for (const proto::TensorDesc& input : def.input()) {
      shapes.push_back(ShapeOf(input));
      dtypes.push_back(DTypeOf(input));
    }
    StatusOr<FusedLayout> layout = InferFusedLayout(*program, shapes, dtypes);
    if (!layout.ok()) return KernelDefError(def, layout.status().message());
    if (def.output_size() != static_cast<int>(program->outputs.size())) {
      return KernelDefError(def, "the program has " + std::to_string(program->outputs.size()) +
                                     " outputs but the kernel " +
                                     std::to_string(def.output_size()));
    }
    for (int output = 0; output < def.output_size(); ++output) {
      const size_t step = static_cast<size_t>(program->outputs[static_cast<size_t>(output)]);
      const std::string name = "output y" + std::to_string(output);
      if (DTypeOf(def.output(output)) != layout->step_dtypes[step]) {
        return KernelDefError(def, name + " must be " + DTypeName(layout->step_dtypes[step]));
      }
      SOFTWIRE_RETURN_IF_ERROR(
          CheckShape(def, name, ShapeOf(def.output(output)), layout->step_shapes[step]));
    }
    auto kernel = std::unique_ptr<FusedKernel>(new FusedKernel(layout->elements));
    SOFTWIRE_RETURN_IF_ERROR(kernel->Compile(def, *program, *layout, dtypes));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(const KernelContext& context) override {
    ParallelFor(context.parallel, elements_, MinChunkFor(work_per_element_),
                [&](int64_t begin, int64_t end) { RunRange(context, begin, end); });
    return Status::Ok();
  }

 private:
  explicit FusedKernel(int64_t elements) : elements_(elements) {}

  // Assigns buffers: one per staged input, one per statement.
  Status Compile(const proto::KernelDef& def, const FusedProgram& program,
                 const FusedLayout& layout, const std::vector<DType>& dtypes) {
    std::vector<Source> input_source(dtypes.size());
    int buffers = 0;
    for (size_t input = 0; input < dtypes.size(); ++input) {
      const bool bfloat16 = dtypes[input] == DType::kBFloat16;
      const int64_t period = layout.input_period[input];
      if (!bfloat16 && period == elements_) {
        input_source[input] = {Source::kInput, static_cast<int>(input)};
        continue;
      }
      staged_.push_back({static_cast<int>(input), buffers, bfloat16, period});
      input_source[input] = {Source::kBuffer, buffers++};
    }
    work_per_element_ = static_cast<int64_t>(dtypes.size() + program.outputs.size());
    for (const FusedStep& step : program.steps) {
      CompiledStep compiled;
      compiled.op = step.op;
      compiled.factor = static_cast<float>(step.factor);
      compiled.dtype = step.dtype;
      for (const FusedOperand& operand : step.operands) {
        compiled.operands.push_back(operand.is_input
                                        ? input_source[static_cast<size_t>(operand.index)]
                                        : steps_[static_cast<size_t>(operand.index)].buffer_source);
      }
      compiled.buffer = buffers++;
      steps_.push_back({compiled, {Source::kBuffer, compiled.buffer}});
      work_per_element_ += FusedStepWork(step);
    }
    if (static_cast<size_t>(buffers) > kMaxBuffers) {
      return KernelDefError(def, "needs " + std::to_string(buffers) +
                                     " blocks of values; at most " + std::to_string(kMaxBuffers) +
                                     " fit");
    }
    for (size_t output = 0; output < program.outputs.size(); ++output) {
      const size_t step = static_cast<size_t>(program.outputs[output]);
      outputs_.push_back(
          {steps_[step].compiled.buffer, layout.step_dtypes[step] == DType::kBFloat16});
    }
    return Status::Ok();
  }

  void RunRange(const KernelContext& context, int64_t begin, int64_t end) const {
    alignas(64) float buffers[kMaxBuffers][kBlock];
    for (int64_t block = begin; block < end; block += kBlock) {
      const int64_t count = std::min(kBlock, end - block);
      for (const StagedInput& staged : staged_) Stage(context, staged, block, count, buffers);
      for (const Step& step : steps_) RunStep(context, step.compiled, block, count, buffers);
      for (size_t output = 0; output < outputs_.size(); ++output) {
        Store(context.outputs[output].data, outputs_[output], block, count, buffers);
      }
    }
  }

  static void Stage(const KernelContext& context, const StagedInput& staged, int64_t block,
                    int64_t count, float (*buffers)[kBlock]) {
    float* out = buffers[staged.buffer];
    const void* data = context.inputs[static_cast<size_t>(staged.input)].data;
    // Runs of consecutive elements: the whole block, or the pieces between period boundaries.
    for (int64_t done = 0; done < count;) {
      const int64_t at = (block + done) % staged.period;
      const int64_t run = std::min(count - done, staged.period - at);
      if (staged.bfloat16) {
        const BFloat16* x = static_cast<const BFloat16*>(data) + at;
        for (int64_t i = 0; i < run; ++i) out[done + i] = ToFloat(x[i]);
      } else {
        std::memcpy(out + done, static_cast<const float*>(data) + at,
                    static_cast<size_t>(run) * sizeof(float));
      }
      done += run;
    }
  }

  static const float* Operand(const KernelContext& context, const Source& source, int64_t block,
                              float (*buffers)[kBlock]) {
    if (source.kind == Source::kBuffer) return buffers[source.index];
    return static_cast<const float*>(context.inputs[static_cast<size_t>(source.index)].data) +
           block;
  }

  static void RunStep(const KernelContext& context, const CompiledStep& step, int64_t block,
                      int64_t count, float (*buffers)[kBlock]) {
    float* __restrict out = buffers[step.buffer];
    const float* a = Operand(context, step.operands[0], block, buffers);
    const float* b =
        step.operands.size() > 1 ? Operand(context, step.operands[1], block, buffers) : nullptr;
    switch (step.op) {
      case FusedOp::kBiasAdd:
      case FusedOp::kAdd:
        for (int64_t i = 0; i < count; ++i) out[i] = a[i] + b[i];
        break;
      case FusedOp::kAddN:
        // In operand order, as add_n sums (docs/OPS.md).
        for (int64_t i = 0; i < count; ++i) out[i] = a[i] + b[i];
        for (size_t k = 2; k < step.operands.size(); ++k) {
          const float* x = Operand(context, step.operands[k], block, buffers);
          for (int64_t i = 0; i < count; ++i) out[i] += x[i];
        }
        break;
      case FusedOp::kScale: {
        const float factor = step.factor;
        for (int64_t i = 0; i < count; ++i) out[i] = factor * a[i];
        break;
      }
      case FusedOp::kRelu:
        for (int64_t i = 0; i < count; ++i) out[i] = Relu::Apply(a[i]);
        break;
      case FusedOp::kGelu:
        for (int64_t i = 0; i < count; ++i) out[i] = Gelu::Apply(a[i]);
        break;
      case FusedOp::kReluGrad:
        for (int64_t i = 0; i < count; ++i) out[i] = ReluGrad::Apply(a[i], b[i]);
        break;
      case FusedOp::kGeluGrad:
        for (int64_t i = 0; i < count; ++i) out[i] = GeluGrad::Apply(a[i], b[i]);
        break;
      case FusedOp::kCast:
        if (step.dtype == DType::kBFloat16) {
          for (int64_t i = 0; i < count; ++i) out[i] = ToFloat(ToBFloat16(a[i]));
        } else {
          std::memcpy(out, a, static_cast<size_t>(count) * sizeof(float));  // Widened already.
        }
        break;
    }
  }

  static void Store(void* data, const CompiledOutput& output, int64_t block, int64_t count,
                    float (*buffers)[kBlock]) {
    const float* value = buffers[output.buffer];
    if (output.bfloat16) {
      BFloat16* y = static_cast<BFloat16*>(data) + block;
      for (int64_t i = 0; i < count; ++i) y[i] = ToBFloat16(value[i]);  // Exact: a cast's value.
    } else {
      std::memcpy(static_cast<float*>(data) + block, value,
                  static_cast<size_t>(count) * sizeof(float));
    }
  }

  struct Step {
    CompiledStep compiled;
    Source buffer_source;
  };

  const int64_t elements_;
  int64_t work_per_element_ = 1;
  std::vector<StagedInput> staged_;
  std::vector<Step> steps_;
  std::vector<CompiledOutput> outputs_;
};

}  // namespace

void RegisterFusedKernel(KernelRegistry* registry) {
  registry->Register("fused", FusedKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
