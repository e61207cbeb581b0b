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
//
// A product epilogue (a program that starts with matmul): the product runs as the matmul
// kernel runs it (GemmShape::RunParallel for float32, Bf16Product for bfloat16: the same calls
// in the same bands, so c holds the same values), and each band of c's rows, as soon as it is
// computed, goes through the statements above on the thread that computed it, while it is in
// cache (product_epilogue.h). A band lands in the output that is the product's value when the
// program keeps it (the backward pass reads it), else in a scratch band of the thread's own,
// grown to the largest band it sees and kept for later firings; c is never written whole. The
// compiler never lays an output of such a kernel over the product's operands or lays the
// product's value over an input (proto/fused_program.h FusedMayWriteOver): other bands read
// all of b, and a band of c lands before the statements read their inputs.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/bfloat16.h"
#include "proto/fused_program.h"
#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/bf16_product.h"
#include "runtime/kernels/cpu/elementwise_functions.h"
#include "runtime/kernels/cpu/gemm_shape.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"
#include "runtime/kernels/cpu/product_epilogue.h"

namespace softwire {
namespace runtime {
namespace {

// Elements per block: kMaxBuffers blocks of 512 floats (2 KiB each) stay within L1.
constexpr int64_t kBlock = 512;
// Statement values plus staged inputs a program may use: 24 x 2 KiB of stack per thread.
constexpr size_t kMaxBuffers = 24;

// Where a statement's operand lives during a block.
struct Source {
  enum Kind { kInput, kBuffer, kProduct } kind = kInput;
  int index = 0;  // Kernel input (read in place) or buffer; unused for the product's value.
};

// The product's value for the range a block interpreter runs on: flat element `begin` of c
// is at `data`.
struct ProductRows {
  const float* data = nullptr;
  int64_t begin = 0;
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
  bool product = false;  // The product's value: its bands are written there already.
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
    if (program->HasProduct()) {
      SOFTWIRE_RETURN_IF_ERROR(kernel->MakeProduct(program->steps[0], *layout, dtypes[0]));
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(const KernelContext& context) override {
    if (has_product_) {
      Epilogue epilogue(*this, context);
      if (bf16_product_ != nullptr) {
        bf16_product_->Run(context.parallel, context.inputs[0].As<BFloat16>(),
                           context.inputs[1].As<BFloat16>(), epilogue);
      } else {
        gemm_.RunParallel(context.parallel, context.inputs[0].As<float>(),
                          context.inputs[1].As<float>(), epilogue);
      }
      return Status::Ok();
    }
    ParallelFor(context.parallel, elements_, MinChunkFor(work_per_element_),
                [&](int64_t begin, int64_t end) { RunRange(context, ProductRows(), begin, end); });
    return Status::Ok();
  }

 private:
  // The statements after the product, on each band of its rows (see the file comment).
  class Epilogue final : public ProductEpilogue {
   public:
    Epilogue(const FusedKernel& kernel, const KernelContext& context)
        : kernel_(kernel), context_(context) {}

    float* Rows(int64_t begin, int64_t end) override {
      const int64_t columns = kernel_.gemm_.n;
      if (kernel_.product_output_ >= 0) {
        return context_.outputs[static_cast<size_t>(kernel_.product_output_)].As<float>() +
               begin * columns;
      }
      // On a cache line, as the arena's registers are: the product's vector stores and the
      // statements' loads would otherwise split lines.
      thread_local std::vector<float> scratch;
      constexpr size_t kLine = 64;
      const size_t size = static_cast<size_t>((end - begin) * columns);
      if (scratch.size() < size + kLine / sizeof(float))
        scratch.resize(size + kLine / sizeof(float));
      void* data = scratch.data();
      size_t space = scratch.size() * sizeof(float);
      return static_cast<float*>(std::align(kLine, size * sizeof(float), data, space));
    }

    void Written(float* rows, int64_t begin, int64_t end, ParallelRunner* parallel) override {
      const int64_t columns = kernel_.gemm_.n;
      const ProductRows product{rows, begin * columns};
      if (parallel == nullptr) {
        kernel_.RunRange(context_, product, begin * columns, end * columns);
        return;
      }
      ParallelFor(parallel, (end - begin) * columns, MinChunkFor(kernel_.work_per_element_),
                  [&](int64_t first, int64_t last) {
                    kernel_.RunRange(context_, product, product.begin + first,
                                     product.begin + last);
                  });
    }

   private:
    const FusedKernel& kernel_;
    const KernelContext& context_;
  };

  explicit FusedKernel(int64_t elements) : elements_(elements) {}

  // The product of statement 0, made as the matmul kernel makes it (matmul_kernels.cc).
  Status MakeProduct(const FusedStep& step, const FusedLayout& layout, DType operands) {
    has_product_ = true;
    gemm_.transpose_a = step.transpose_a;
    gemm_.transpose_b = step.transpose_b;
    gemm_.m = layout.product_rows;
    gemm_.n = layout.product_columns;
    gemm_.k = layout.product_depth;
    if (operands != DType::kBFloat16) return Status::Ok();
    Bf16ProductShape shape;
    shape.transpose_a = gemm_.transpose_a;
    shape.transpose_b = gemm_.transpose_b;
    shape.m = gemm_.m;
    shape.n = gemm_.n;
    shape.k = gemm_.k;
    SOFTWIRE_ASSIGN_OR_RETURN(bf16_product_, Bf16Product::Create(shape));
    return Status::Ok();
  }

  // Assigns buffers: one per staged input, one per statement.
  Status Compile(const proto::KernelDef& def, const FusedProgram& program,
                 const FusedLayout& layout, const std::vector<DType>& dtypes) {
    std::vector<Source> input_source(dtypes.size());
    int buffers = 0;
    const size_t product_operands = program.HasProduct() ? 2 : 0;  // Read by the product only.
    for (size_t input = product_operands; input < dtypes.size(); ++input) {
      const bool bfloat16 = dtypes[input] == DType::kBFloat16;
      const int64_t period = layout.input_period[input];
      if (period == 0) continue;  // The ordering input (`after x<i>`): never read.
      if (!bfloat16 && period == elements_) {
        input_source[input] = {Source::kInput, static_cast<int>(input)};
        continue;
      }
      staged_.push_back({static_cast<int>(input), buffers, bfloat16, period});
      input_source[input] = {Source::kBuffer, buffers++};
    }
    work_per_element_ = static_cast<int64_t>(dtypes.size() + program.outputs.size());
    for (const FusedStep& step : program.steps) {
      if (step.op == FusedOp::kMatmul) {  // Statement 0: its value comes in bands.
        steps_.push_back({CompiledStep(), {Source::kProduct, 0}});
        continue;
      }
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
      const bool product = program.steps[step].op == FusedOp::kMatmul;
      if (product) product_output_ = static_cast<int>(output);
      outputs_.push_back(
          {steps_[step].compiled.buffer, layout.step_dtypes[step] == DType::kBFloat16, product});
    }
    return Status::Ok();
  }

  // Flat elements [begin, end); `product`: the product's value there (a product epilogue).
  void RunRange(const KernelContext& context, const ProductRows& product, int64_t begin,
                int64_t end) const {
    alignas(64) float buffers[kMaxBuffers][kBlock];
    for (int64_t block = begin; block < end; block += kBlock) {
      const int64_t count = std::min(kBlock, end - block);
      for (const StagedInput& staged : staged_) Stage(context, staged, block, count, buffers);
      for (const Step& step : steps_) {
        if (step.buffer_source.kind == Source::kProduct) continue;
        RunStep(context, step.compiled, product, block, count, buffers);
      }
      for (size_t output = 0; output < outputs_.size(); ++output) {
        if (outputs_[output].product) continue;
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

  static const float* Operand(const KernelContext& context, const Source& source,
                              const ProductRows& product, int64_t block, float (*buffers)[kBlock]) {
    if (source.kind == Source::kBuffer) return buffers[source.index];
    if (source.kind == Source::kProduct) return product.data + (block - product.begin);
    return static_cast<const float*>(context.inputs[static_cast<size_t>(source.index)].data) +
           block;
  }

  static void RunStep(const KernelContext& context, const CompiledStep& step,
                      const ProductRows& product, int64_t block, int64_t count,
                      float (*buffers)[kBlock]) {
    float* __restrict out = buffers[step.buffer];
    const float* a = Operand(context, step.operands[0], product, block, buffers);
    const float* b = step.operands.size() > 1
                         ? Operand(context, step.operands[1], product, block, buffers)
                         : nullptr;
    switch (step.op) {
      case FusedOp::kBiasAdd:
      case FusedOp::kAdd:
        for (int64_t i = 0; i < count; ++i) out[i] = a[i] + b[i];
        break;
      case FusedOp::kAddN:
        // In operand order, as add_n sums (docs/OPS.md).
        for (int64_t i = 0; i < count; ++i) out[i] = a[i] + b[i];
        for (size_t k = 2; k < step.operands.size(); ++k) {
          const float* x = Operand(context, step.operands[k], product, block, buffers);
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
      case FusedOp::kMatmul:  // Not a block statement: its value comes in bands.
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
  bool has_product_ = false;
  GemmShape gemm_;                             // The product's shape (float32: its runner).
  std::unique_ptr<Bf16Product> bf16_product_;  // Null for float32 operands.
  int product_output_ = -1;                    // The output that is the product's value.

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
