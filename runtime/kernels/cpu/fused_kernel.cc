// fused (docs/OPS.md): a chain of element-wise ops (proto/fused_program.h) in one pass over
// memory, the kernel of the actors the compiler's fuse_elementwise pass makes.
//
// A small interpreter over blocks: the flat range [0, N) is cut into blocks of kBlock elements
// that stay in L1; per block, inputs that are not float32 read whole (bfloat16, or repeated:
// a bias, a broadcast operand) are first staged into a float32 block, then each statement runs
// as one plain loop over the block (the per-element functions of the unfused kernels,
// elementwise_functions.h, so that results match theirs), and last the outputs are stored, to
// bfloat16 where the output is. Every input element is read, and every output element written,
// once; intermediate values never leave the block. A cast to bfloat16 whose value only an
// output takes does not run as a statement: the output's store rounds its operand (one rounding
// instead of a rounding and a second one to store), and other bfloat16 outputs, a cast's value
// already, are stored by taking their upper halves (bf16_arrays.h).
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
// program keeps it (the backward pass reads it), else in a float32 output of c's size that no
// input overlaps (ProductHome: that output is stored from its statement's block, after the
// block's statements have read c), else in a band of the thread's own, grown to the largest
// band it sees and kept for later firings (memory outside the plan, thread_buffers.h: only
// where every output is bfloat16, too small for c). The compiler never lays an output of such
// a kernel over the product's operands or lays the product's value over an input, nor, where
// an output can be c's home, any output over an input (proto/fused_program.h
// FusedMayWriteOver): other bands read all of b, and a band of c lands before the statements
// read their inputs.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/bfloat16.h"
#include "proto/fused_program.h"
#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/bf16_arrays.h"
#include "runtime/kernels/cpu/bf16_product.h"
#include "runtime/kernels/cpu/elementwise_functions.h"
#include "runtime/kernels/cpu/gemm_shape.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"
#include "runtime/kernels/cpu/product_epilogue.h"
#include "runtime/kernels/cpu/thread_buffers.h"

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
  bool runs = true;  // False for a cast to bfloat16 folded into its output's store.
  FusedOp op = FusedOp::kRelu;
  std::vector<Source> operands;
  int buffer = 0;  // Where its value goes.
  float factor = 1;
  DType dtype = DType::kFloat32;
};

// How an output's elements reach its register.
enum class StoreKind {
  kCopy,      // Float32: copied from where its statement left them.
  kTruncate,  // Bfloat16 from a cast's value, exact already: the upper halves.
  kRound,     // Bfloat16 from the operand of a cast whose value nothing else reads: the cast
              // itself, rounded once as it is stored (the statement does not run).
  kProduct,   // The product's value: its bands are written there already.
};

struct CompiledOutput {
  Source source;
  StoreKind store = StoreKind::kCopy;
  // A float32 statement's value, the first output to take it: its statement may write it in
  // place (DirectOutputs decides per firing).
  bool may_write_directly = false;
};

// Per block: where each buffer's values are read from and where a statement writes them.
struct BlockValues {
  const float* read[kMaxBuffers];
  float* write[kMaxBuffers];
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
    uint32_t direct = DirectOutputs(context);
    if (has_product_) {
      float* home = ProductHome(context, &direct);
      Epilogue epilogue(*this, context, direct, home);
      if (bf16_product_ != nullptr) {
        bf16_product_->Run(context.parallel, context.inputs[0].As<BFloat16>(),
                           context.inputs[1].As<BFloat16>(), epilogue);
      } else {
        gemm_.RunParallel(context.parallel, context.inputs[0].As<float>(),
                          context.inputs[1].As<float>(), epilogue);
      }
      return Status::Ok();
    }
    ParallelFor(
        context.parallel, elements_, MinChunkFor(work_per_element_),
        [&](int64_t begin, int64_t end) { RunRange(context, ProductRows(), direct, begin, end); });
    return Status::Ok();
  }

 private:
  // The statements after the product, on each band of its rows (see the file comment).
  class Epilogue final : public ProductEpilogue {
   public:
    Epilogue(const FusedKernel& kernel, const KernelContext& context, uint32_t direct, float* home)
        : kernel_(kernel), context_(context), direct_(direct), home_(home) {}

    float* Rows(int64_t begin, int64_t end) override {
      const int64_t columns = kernel_.gemm_.n;
      if (home_ != nullptr) return home_ + begin * columns;
      // The thread's own band (page-aligned: the product's vector stores and the statements'
      // loads never split a cache line).
      const size_t bytes = static_cast<size_t>((end - begin) * columns) * sizeof(float);
      return static_cast<float*>(ThreadBuffer(ThreadBufferUse::kProductRows, bytes));
    }

    void Written(float* rows, int64_t begin, int64_t end, ParallelRunner* parallel) override {
      const int64_t columns = kernel_.gemm_.n;
      const ProductRows product{rows, begin * columns};
      if (parallel == nullptr) {
        kernel_.RunRange(context_, product, direct_, begin * columns, end * columns);
        return;
      }
      ParallelFor(parallel, (end - begin) * columns, MinChunkFor(kernel_.work_per_element_),
                  [&](int64_t first, int64_t last) {
                    kernel_.RunRange(context_, product, direct_, product.begin + first,
                                     product.begin + last);
                  });
    }

   private:
    const FusedKernel& kernel_;
    const KernelContext& context_;
    const uint32_t direct_;
    float* const home_;  // ProductHome: where c's rows go; null: a scratch band.
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
    if (program.outputs.size() > 32) {  // DirectOutputs' bits.
      return KernelDefError(
          def, "has " + std::to_string(program.outputs.size()) + " outputs; at most 32");
    }
    std::vector<bool> read_by_statement(program.steps.size(), false);
    for (const FusedStep& step : program.steps) {
      for (const FusedOperand& operand : step.operands) {
        if (!operand.is_input) read_by_statement[static_cast<size_t>(operand.index)] = true;
      }
    }
    for (size_t output = 0; output < program.outputs.size(); ++output) {
      const size_t step = static_cast<size_t>(program.outputs[output]);
      Step& made = steps_[step];
      CompiledOutput compiled{made.buffer_source, StoreKind::kCopy};
      if (program.steps[step].op == FusedOp::kMatmul) {
        product_output_ = static_cast<int>(output);
        compiled.store = StoreKind::kProduct;
      } else if (layout.step_dtypes[step] == DType::kBFloat16) {
        compiled.store = StoreKind::kTruncate;
        // Not from an input read in place: an output stored before this one may lie over it.
        if (made.compiled.op == FusedOp::kCast && !read_by_statement[step] &&
            made.compiled.operands[0].kind != Source::kInput) {
          made.compiled.runs = false;
          compiled.source = made.compiled.operands[0];
          compiled.store = StoreKind::kRound;
        }
      }
      if (compiled.store == StoreKind::kCopy && compiled.source.kind == Source::kBuffer) {
        compiled.may_write_directly = true;
        for (const CompiledOutput& earlier : outputs_) {
          if (earlier.may_write_directly && earlier.source.index == compiled.source.index) {
            compiled.may_write_directly = false;  // Two outputs keep one value: one in place.
          }
        }
      }
      outputs_.push_back(compiled);
    }
    return Status::Ok();
  }

  // Bit o set: output o is a float32 statement's value whose register overlaps no input of
  // this firing, so the statement writes it where it belongs instead of into a block to be
  // copied (an output laid over an input must wait until the block's statements have read it).
  uint32_t DirectOutputs(const KernelContext& context) const {
    uint32_t direct = 0;
    for (size_t output = 0; output < outputs_.size(); ++output) {
      if (!outputs_[output].may_write_directly) continue;
      if (!OverlapsAnInput(context, context.outputs[output])) direct |= uint32_t{1} << output;
    }
    return direct;
  }

  // Where the product's rows land this firing: the output that is its value when the program
  // keeps it; else, when one exists, a float32 output of c's size that overlaps no input and
  // is stored from its statement's block (its bit in *direct cleared): a block's statements
  // read its elements of c before the block's stores overwrite them, and blocks are disjoint,
  // so c needs no memory of its own (the compiler keeps such outputs off the inputs: proto/
  // fused_program.h FusedMayWriteOver); else null (a scratch band of the thread's own).
  float* ProductHome(const KernelContext& context, uint32_t* direct) const {
    if (product_output_ >= 0) {
      return context.outputs[static_cast<size_t>(product_output_)].As<float>();
    }
    const int64_t c_bytes = gemm_.m * gemm_.n * static_cast<int64_t>(sizeof(float));
    for (size_t output = 0; output < outputs_.size(); ++output) {
      const TensorView& candidate = context.outputs[output];
      if (outputs_[output].store != StoreKind::kCopy || candidate.NumBytes() != c_bytes ||
          OverlapsAnInput(context, candidate)) {
        continue;
      }
      *direct &= ~(uint32_t{1} << output);
      return candidate.As<float>();
    }
    return nullptr;
  }

  static bool OverlapsAnInput(const KernelContext& context, const TensorView& written) {
    const char* begin = static_cast<const char*>(written.data);
    const char* end = begin + written.NumBytes();
    for (const TensorView& input : context.inputs) {
      const char* input_begin = static_cast<const char*>(input.data);
      if (input_begin < end && begin < input_begin + input.NumBytes()) return true;
    }
    return false;
  }

  // Flat elements [begin, end); `product`: the product's value there (a product epilogue);
  // `direct`: DirectOutputs of this firing.
  void RunRange(const KernelContext& context, const ProductRows& product, uint32_t direct,
                int64_t begin, int64_t end) const {
    alignas(64) float blocks[kMaxBuffers][kBlock];
    // Where each buffer's values are this block: in its own block, an output's register (a
    // direct output) or, for a float32 repeated input whose period the block does not cross,
    // the input itself.
    BlockValues values;
    for (size_t buffer = 0; buffer < kMaxBuffers; ++buffer) {
      values.write[buffer] = blocks[buffer];
      values.read[buffer] = blocks[buffer];
    }
    for (int64_t block = begin; block < end; block += kBlock) {
      const int64_t count = std::min(kBlock, end - block);
      for (size_t output = 0; output < outputs_.size(); ++output) {
        if (direct >> output & 1u) {
          const int buffer = outputs_[output].source.index;
          values.write[buffer] = context.outputs[output].As<float>() + block;
          values.read[buffer] = values.write[buffer];
        }
      }
      for (const StagedInput& staged : staged_) {
        Stage(context, staged, block, count, blocks[staged.buffer], &values.read[staged.buffer]);
      }
      for (const Step& step : steps_) {
        if (step.buffer_source.kind == Source::kProduct || !step.compiled.runs) continue;
        RunStep(context, step.compiled, product, block, count, values);
      }
      for (size_t output = 0; output < outputs_.size(); ++output) {
        const CompiledOutput& compiled = outputs_[output];
        if (compiled.store == StoreKind::kProduct || (direct >> output & 1u)) continue;
        Store(context.outputs[output].data, compiled,
              Operand(context, compiled.source, product, block, values), block, count);
      }
    }
  }

  // Makes *read point at the block's values of a staged input: copied (widened) into `own`,
  // or, for a float32 input whose period the block does not cross, in the input itself.
  static void Stage(const KernelContext& context, const StagedInput& staged, int64_t block,
                    int64_t count, float* own, const float** read) {
    const void* data = context.inputs[static_cast<size_t>(staged.input)].data;
    const int64_t first = block % staged.period;
    if (!staged.bfloat16 && first + count <= staged.period) {
      *read = static_cast<const float*>(data) + first;
      return;
    }
    *read = own;
    float* out = own;
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
                              const ProductRows& product, int64_t block,
                              const BlockValues& values) {
    if (source.kind == Source::kBuffer) return values.read[source.index];
    if (source.kind == Source::kProduct) return product.data + (block - product.begin);
    return static_cast<const float*>(context.inputs[static_cast<size_t>(source.index)].data) +
           block;
  }

  static void RunStep(const KernelContext& context, const CompiledStep& step,
                      const ProductRows& product, int64_t block, int64_t count,
                      const BlockValues& values) {
    float* __restrict out = values.write[step.buffer];
    const float* a = Operand(context, step.operands[0], product, block, values);
    const float* b = step.operands.size() > 1
                         ? Operand(context, step.operands[1], product, block, values)
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
          const float* x = Operand(context, step.operands[k], product, block, values);
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
          RoundThroughBFloat16(a, out, count);
        } else {
          std::memcpy(out, a, static_cast<size_t>(count) * sizeof(float));  // Widened already.
        }
        break;
    }
  }

  static void Store(void* data, const CompiledOutput& output, const float* value, int64_t block,
                    int64_t count) {
    switch (output.store) {
      case StoreKind::kCopy:
        std::memcpy(static_cast<float*>(data) + block, value,
                    static_cast<size_t>(count) * sizeof(float));
        break;
      case StoreKind::kTruncate:
        TruncateToBFloat16(value, static_cast<BFloat16*>(data) + block, count);
        break;
      case StoreKind::kRound:
        ConvertToBFloat16(value, static_cast<BFloat16*>(data) + block, count);
        break;
      case StoreKind::kProduct:
        break;
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
