// FusedProgram: what one `fused` kernel computes (docs/OPS.md, "fused"): a short list of
// element-wise ops over the kernel's inputs, run as one pass over memory. The compiler's
// fuse_elementwise pass writes it as the kernel's `program` attribute; the cpu kernel, the
// reference kernel, the compiler's inference and cost, and the trace's labels read it back with
// ParseFusedProgram. Kept beside kernel_attributes.h because those readers may not include each
// other.
//
// The text form, one statement per op, then one per output, separated by "; ":
//
//   t0 = bias_add(x0, x1); t1 = gelu(t0); t2 = cast(t1, bfloat16); y0 = t0; y1 = t2
//
// x<i> is kernel input i, t<k> the value of statement k (statements are numbered from 0 in
// order and read only inputs and earlier values), y<j> = t<k> makes value k kernel output j
// (outputs listed in order, each once), and a last `after x<i>` makes input i an ordering input:
// no statement reads it, the kernel fires only once it has arrived (the compiler's
// recompute_activations pass uses one so a recomputation waits for the backward pass). Ops:
// bias_add(x, bias), add(a, b), add_n(a, b, ...), scale(x, FACTOR), relu(x), gelu(x), relu_grad(dy,
// y), gelu_grad(dy, x), cast(x, DTYPE); each computes what the op of that name computes
// (docs/OPS.md), element by element.
//
// A product epilogue: statement 0 may be a product, matmul(x0, x1) with the optional words
// transpose_a and transpose_b after the operands (`t0 = matmul(x0, x1, transpose_b)`): it
// computes what the matmul op computes (float32 c of two float32 or two bfloat16 operands), and
// the statements after it run on each band of c's rows as soon as the band is computed, so c
// is never written to memory and read back (docs/OPS.md "fused"). A product reads kernel inputs
// x0 and x1 only, which no other statement reads; there is at most one, and it is statement 0.
//
// Shapes (InferFusedLayout): every value has the same number of elements N. An input is read
// whole (N elements, in order) or, as bias_add's bias or a broadcast operand of add whose shape
// is a suffix of the result's (leading 1s aside), repeated: element i reads input[i % n]. So a
// kernel walks all of them once, in one flat order.
//
// Pure functions; thread-safe.
#ifndef SOFTWIRE_PROTO_FUSED_PROGRAM_H_
#define SOFTWIRE_PROTO_FUSED_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/shape.h"
#include "base/status.h"

namespace softwire {

enum class FusedOp {
  kBiasAdd,
  kAdd,
  kAddN,
  kScale,
  kRelu,
  kGelu,
  kReluGrad,
  kGeluGrad,
  kCast,
  kMatmul,  // Only as statement 0 (a product epilogue, above).
};

// True for the element-wise op types a program may hold ("bias_add", ..., "cast"): not
// matmul, which may only start a program.
bool IsFusableOpType(const std::string& op_type);

// True for the product op types that may start a program ("matmul").
bool IsFusableProductOpType(const std::string& op_type);

// The op of `op_type`; false when a program may not hold it.
bool FusedOpOf(const std::string& op_type, FusedOp* op);

// "bias_add" for kBiasAdd, and so on.
const char* FusedOpName(FusedOp op);

// An operand: kernel input `index` (x<index>) or the value of statement `index` (t<index>).
struct FusedOperand {
  bool is_input = false;
  int index = 0;

  bool operator==(const FusedOperand& other) const {
    return is_input == other.is_input && index == other.index;
  }
};

struct FusedStep {
  FusedOp op = FusedOp::kRelu;
  std::vector<FusedOperand> operands;
  double factor = 1;              // scale's.
  DType dtype = DType::kFloat32;  // cast's target.
  bool transpose_a = false;       // matmul's.
  bool transpose_b = false;       // matmul's.
};

struct FusedProgram {
  std::vector<FusedStep> steps;
  std::vector<int> outputs;  // Per kernel output: the statement whose value it is.
  int after_input = -1;      // The ordering input (`after x<i>`, read by no statement), or -1.

  // 1 + the largest input index any operand or the ordering input names (0 when none does).
  int InputCount() const;

  // Statement 0 is a product (its operands are x0 and x1).
  bool HasProduct() const { return !steps.empty() && steps[0].op == FusedOp::kMatmul; }
};

// Parses the text form above. InvalidArgument naming the statement at fault: unknown op, wrong
// operand count, an operand not defined before, a bad factor or dtype, outputs out of order or
// naming no value, a program without statements or outputs.
StatusOr<FusedProgram> ParseFusedProgram(const std::string& text);

// The text form ParseFusedProgram reads back to an equal program; factors keep 17 digits.
std::string FormatFusedProgram(const FusedProgram& program);

// The op types in statement order joined by '+', for labels: "bias_add+gelu+cast",
// "matmul+bias_add+relu".
std::string FusedOpsLabel(const FusedProgram& program);

// The types of a program over inputs of these types, as every reader checks them.
struct FusedLayout {
  int64_t elements = 0;               // N.
  std::vector<Shape> step_shapes;     // Per statement.
  std::vector<DType> step_dtypes;     // Per statement: float32, or bfloat16 after a cast.
  std::vector<int64_t> input_period;  // Per input: N when read whole, else n (i % n); a
                                      // product's operands: their element counts; the
                                      // ordering input (`after`): 0, never read.
  int64_t product_rows = 0;           // A product's c: M (leading axes flattened), N, K.
  int64_t product_columns = 0;
  int64_t product_depth = 0;
};

// InvalidArgument, naming the statement and operand, when the inputs do not fit: operands of
// ops other than cast must be float32, cast's float32 or bfloat16; relu_grad, gelu_grad and
// add_n take operands of one shape; bias_add a bias [C] matching x's last axis; add broadcasts
// (docs/OPS.md) with a result of N elements and any smaller operand a kernel input of suffix
// shape; every statement has N elements; an input read both whole and repeated; an input no
// statement reads; a product anywhere but statement 0, not reading x0 and x1, whose operands
// another statement reads, or whose shapes and dtypes matmul refuses.
StatusOr<FusedLayout> InferFusedLayout(const FusedProgram& program,
                                       const std::vector<Shape>& input_shapes,
                                       const std::vector<DType>& input_dtypes);

// Element operations per element of one element-wise statement (relu 1, gelu and gelu_grad
// 20, ...), for cost models and parallel chunk sizes; a product's are 2 K per element of c
// (FusedLayout::product_depth), not counted here: 0.
int64_t FusedStepWork(const FusedStep& step);

// Whether a kernel running `program` may write output `output` over input `input` that it
// reads whole with the output's type (plan/register_lifetimes.h): always for a program
// without a product (a block's outputs are stored after its statements read their inputs);
// with a product, never over the product's operands (other bands still read them) and never
// for the output that is the product's value (its bands are written as they are computed).
// And never when the product's value is no output but `float32_output` (some output is
// float32): the kernel then writes c's bands into a float32 output that overlaps no input
// (runtime/kernels/cpu/fused_kernel.cc ProductHome) instead of into scratch memory outside
// the plan, which an output laid over an input would leave it without.
bool FusedMayWriteOver(const FusedProgram& program, int input, int output, bool float32_output);

}  // namespace softwire

#endif  // SOFTWIRE_PROTO_FUSED_PROGRAM_H_
