#include "proto/fused_program.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace softwire {
namespace {

struct OpInfo {
  FusedOp op;
  const char* name;
  int min_operands;  // Value operands (a scale factor or a cast's dtype is not one).
  int max_operands;
  int64_t work;  // Element operations per element.
};

// gelu and gelu_grad: ~20 operations an element (runtime/kernels/cpu/elementwise_functions.h).
constexpr OpInfo kOps[] = {
    {FusedOp::kBiasAdd, "bias_add", 2, 2, 1},   {FusedOp::kAdd, "add", 2, 2, 1},
    {FusedOp::kAddN, "add_n", 2, 1 << 20, 1},   {FusedOp::kScale, "scale", 1, 1, 1},
    {FusedOp::kRelu, "relu", 1, 1, 1},          {FusedOp::kGelu, "gelu", 1, 1, 20},
    {FusedOp::kReluGrad, "relu_grad", 2, 2, 1}, {FusedOp::kGeluGrad, "gelu_grad", 2, 2, 20},
    {FusedOp::kCast, "cast", 1, 1, 1},          {FusedOp::kMatmul, "matmul", 2, 2, 0},
};

constexpr char kTransposeA[] = "transpose_a";
constexpr char kTransposeB[] = "transpose_b";

const OpInfo* FindOp(const std::string& name) {
  for (const OpInfo& info : kOps) {
    if (name == info.name) return &info;
  }
  return nullptr;
}

const OpInfo& InfoOf(FusedOp op) {
  for (const OpInfo& info : kOps) {
    if (info.op == op) return info;
  }
  return kOps[0];
}

std::string Trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(' ');
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(' ') - begin + 1);
}

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> pieces;
  size_t begin = 0;
  while (true) {
    const size_t end = text.find(separator, begin);
    pieces.push_back(Trim(text.substr(begin, end == std::string::npos ? end : end - begin)));
    if (end == std::string::npos) return pieces;
    begin = end + 1;
  }
}

// "t12" with prefix 't' -> 12; -1 when `text` is not the prefix and a decimal number.
int IndexAfter(char prefix, const std::string& text) {
  if (text.size() < 2 || text.size() > 8 || text[0] != prefix) return -1;
  int value = 0;
  for (size_t i = 1; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

std::string OperandText(const FusedOperand& operand) {
  return (operand.is_input ? "x" : "t") + std::to_string(operand.index);
}

Status StatementError(size_t index, const std::string& statement, const std::string& problem) {
  return InvalidArgumentError("fused program statement " + std::to_string(index) + " '" +
                              statement + "': " + problem);
}

// `arguments` of statement `number` (the value t<number>) into `step`.
Status ParseArguments(const OpInfo& info, const std::vector<std::string>& arguments, int number,
                      size_t index, const std::string& statement, FusedStep* step) {
  std::vector<std::string> values = arguments;
  if (info.op == FusedOp::kMatmul) {
    // Flags after the operands: transpose_a, then transpose_b.
    while (values.size() > 2 && (values.back() == kTransposeA || values.back() == kTransposeB)) {
      bool& flag = values.back() == kTransposeA ? step->transpose_a : step->transpose_b;
      if (flag) return StatementError(index, statement, "'" + values.back() + "' given twice");
      flag = true;
      values.pop_back();
    }
  }
  if (info.op == FusedOp::kScale || info.op == FusedOp::kCast) {
    if (values.size() != 2) {
      return StatementError(index, statement,
                            std::string(info.name) + " takes one operand and " +
                                (info.op == FusedOp::kScale ? "a factor" : "a dtype"));
    }
    const std::string last = values.back();
    values.pop_back();
    if (info.op == FusedOp::kScale) {
      char* end = nullptr;
      errno = 0;
      step->factor = std::strtod(last.c_str(), &end);
      if (last.empty() || *end != '\0' || errno != 0) {
        return StatementError(index, statement, "factor '" + last + "' is not a number");
      }
    } else {
      StatusOr<DType> dtype = ParseDType(last);
      if (!dtype.ok() || (*dtype != DType::kFloat32 && *dtype != DType::kBFloat16)) {
        return StatementError(index, statement,
                              "dtype must be float32 or bfloat16, not '" + last + "'");
      }
      step->dtype = *dtype;
    }
  }
  const int count = static_cast<int>(values.size());
  if (count < info.min_operands || count > info.max_operands) {
    return StatementError(index, statement,
                          std::string(info.name) + " takes " + std::to_string(info.min_operands) +
                              (info.max_operands > info.min_operands ? " or more" : "") +
                              " operands, not " + std::to_string(count));
  }
  for (const std::string& text : values) {
    FusedOperand operand;
    operand.is_input = !text.empty() && text[0] == 'x';
    operand.index = IndexAfter(operand.is_input ? 'x' : 't', text);
    if (operand.index < 0 || (!operand.is_input && operand.index >= number)) {
      return StatementError(index, statement,
                            "operand '" + text + "' is no input x<i> and no earlier value t<k>");
    }
    step->operands.push_back(operand);
  }
  return Status::Ok();
}

Status ParseStatement(const std::string& statement, size_t index, FusedProgram* program) {
  if (program->after_input >= 0) {
    return StatementError(index, statement, "nothing may follow 'after x<i>'");
  }
  const std::string trimmed = Trim(statement);
  if (trimmed.rfind("after ", 0) == 0) {
    const int input = IndexAfter('x', Trim(trimmed.substr(6)));
    if (input < 0 || program->outputs.empty()) {
      return StatementError(index, statement, "expected 'after x<i>' after the outputs");
    }
    program->after_input = input;
    return Status::Ok();
  }
  const size_t equals = statement.find('=');
  if (equals == std::string::npos) {
    return StatementError(index, statement, "expected 't<k> = op(...)' or 'y<j> = t<k>'");
  }
  const std::string target = Trim(statement.substr(0, equals));
  const std::string value = Trim(statement.substr(equals + 1));
  if (!target.empty() && target[0] == 'y') {
    const int output = IndexAfter('y', target);
    const int step = IndexAfter('t', value);
    if (output != static_cast<int>(program->outputs.size())) {
      return StatementError(index, statement,
                            "outputs must be y0, y1, ... in order; expected y" +
                                std::to_string(program->outputs.size()));
    }
    if (step < 0 || step >= static_cast<int>(program->steps.size())) {
      return StatementError(index, statement, "an output must name a value t<k> defined before");
    }
    program->outputs.push_back(step);
    return Status::Ok();
  }
  const int number = static_cast<int>(program->steps.size());
  if (IndexAfter('t', target) != number || !program->outputs.empty()) {
    return StatementError(index, statement,
                          "values must be t0, t1, ... in order, before the outputs; expected t" +
                              std::to_string(number));
  }
  const size_t open = value.find('(');
  if (open == std::string::npos || value.back() != ')') {
    return StatementError(index, statement, "expected op(operands)");
  }
  const std::string name = Trim(value.substr(0, open));
  const OpInfo* info = FindOp(name);
  if (info == nullptr) return StatementError(index, statement, "unknown op '" + name + "'");
  FusedStep step;
  step.op = info->op;
  SOFTWIRE_RETURN_IF_ERROR(
      ParseArguments(*info, Split(value.substr(open + 1, value.size() - open - 2), ','), number,
                     index, statement, &step));
  program->steps.push_back(std::move(step));
  return Status::Ok();
}

// NumPy broadcasting of two shapes; false when they do not broadcast.
bool Broadcast(const Shape& a, const Shape& b, Shape* result) {
  const int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  for (int axis = 0; axis < rank; ++axis) {
    const int from_a = a.rank() - rank + axis;
    const int from_b = b.rank() - rank + axis;
    const int64_t da = from_a >= 0 ? a.dims()[static_cast<size_t>(from_a)] : 1;
    const int64_t db = from_b >= 0 ? b.dims()[static_cast<size_t>(from_b)] : 1;
    if (da != db && da != 1 && db != 1) return false;
    dims[static_cast<size_t>(axis)] = da == 1 ? db : da;
  }
  *result = Shape(std::move(dims));
  return true;
}

// `operand`, leading 1s aside, is the trailing axes of `result`: element i of a flat walk over
// `result` reads operand[i % n].
bool IsSuffix(const Shape& operand, const Shape& result) {
  size_t first = 0;
  while (first < operand.dims().size() && operand.dims()[first] == 1) ++first;
  const size_t kept = operand.dims().size() - first;
  if (kept > result.dims().size()) return false;
  return std::equal(operand.dims().begin() + static_cast<std::ptrdiff_t>(first),
                    operand.dims().end(), result.dims().end() - static_cast<std::ptrdiff_t>(kept));
}

// Checks and types one statement; the layout holds the statements before it.
class LayoutBuilder {
 public:
  LayoutBuilder(const FusedProgram& program, const std::vector<Shape>& input_shapes,
                const std::vector<DType>& input_dtypes)
      : program_(program), input_shapes_(input_shapes), input_dtypes_(input_dtypes) {}

  StatusOr<FusedLayout> Build() {
    if (program_.InputCount() > static_cast<int>(input_shapes_.size())) {
      return InvalidArgumentError(
          "fused program reads x" + std::to_string(program_.InputCount() - 1) +
          " but the kernel has " + std::to_string(input_shapes_.size()) + " inputs");
    }
    layout_.input_period.assign(input_shapes_.size(), -1);
    for (size_t index = 0; index < program_.steps.size(); ++index) {
      SOFTWIRE_RETURN_IF_ERROR(TypeStep(index));
    }
    if (program_.after_input >= 0) {
      if (layout_.input_period[static_cast<size_t>(program_.after_input)] >= 0) {
        return InvalidArgumentError("fused program reads its ordering input x" +
                                    std::to_string(program_.after_input));
      }
      layout_.input_period[static_cast<size_t>(program_.after_input)] = 0;
    }
    for (size_t input = 0; input < input_shapes_.size(); ++input) {
      if (layout_.input_period[input] < 0) {
        return InvalidArgumentError("fused program reads no statement of input x" +
                                    std::to_string(input));
      }
    }
    return layout_;
  }

 private:
  const Shape& ShapeOf(const FusedOperand& operand) const {
    return operand.is_input ? input_shapes_[static_cast<size_t>(operand.index)]
                            : layout_.step_shapes[static_cast<size_t>(operand.index)];
  }
  DType DTypeOfOperand(const FusedOperand& operand) const {
    return operand.is_input ? input_dtypes_[static_cast<size_t>(operand.index)]
                            : layout_.step_dtypes[static_cast<size_t>(operand.index)];
  }

  Status Fail(size_t index, const std::string& problem) const {
    return InvalidArgumentError("fused program statement t" + std::to_string(index) + " (" +
                                FusedOpName(program_.steps[index].op) + "): " + problem);
  }

  std::string Describe(const FusedOperand& operand) const {
    return OperandText(operand) + " " + DTypeName(DTypeOfOperand(operand)) +
           ShapeOf(operand).ToString();
  }

  Status TypeStep(size_t index) {
    const FusedStep& step = program_.steps[index];
    if (step.op == FusedOp::kMatmul) return TypeProduct(index);
    for (const FusedOperand& operand : step.operands) {
      if (program_.HasProduct() && operand.is_input && operand.index < 2) {
        return Fail(index, "operand " + OperandText(operand) +
                               " is the product's operand; no other statement may read it");
      }
      const DType dtype = DTypeOfOperand(operand);
      const bool allowed =
          dtype == DType::kFloat32 || (step.op == FusedOp::kCast && dtype == DType::kBFloat16);
      if (!allowed) return Fail(index, "operand " + Describe(operand) + " has the wrong dtype");
    }
    const Shape& first = ShapeOf(step.operands[0]);
    Shape result = first;
    std::vector<bool> repeated(step.operands.size(), false);
    switch (step.op) {
      case FusedOp::kReluGrad:
      case FusedOp::kGeluGrad:
      case FusedOp::kAddN:
        for (const FusedOperand& operand : step.operands) {
          if (ShapeOf(operand) != first) {
            return Fail(index, "operand " + Describe(operand) + " differs from " +
                                   Describe(step.operands[0]));
          }
        }
        break;
      case FusedOp::kBiasAdd: {
        const Shape& bias = ShapeOf(step.operands[1]);
        if (first.rank() < 1 || bias.rank() != 1 || bias.dim(0) != first.dim(-1)) {
          return Fail(index, "bias " + Describe(step.operands[1]) +
                                 " does not match the last axis of " + Describe(step.operands[0]));
        }
        repeated[1] = bias.NumElements() != first.NumElements();
        break;
      }
      case FusedOp::kAdd: {
        const Shape& second = ShapeOf(step.operands[1]);
        if (!Broadcast(first, second, &result)) {
          return Fail(index, Describe(step.operands[0]) + " and " + Describe(step.operands[1]) +
                                 " do not broadcast");
        }
        for (size_t k = 0; k < 2; ++k) {
          const Shape& shape = ShapeOf(step.operands[k]);
          if (shape.NumElements() == result.NumElements()) continue;
          if (!step.operands[k].is_input || !IsSuffix(shape, result)) {
            return Fail(index, "a broadcast operand must be a kernel input whose shape ends " +
                                   result.ToString() + "; " + Describe(step.operands[k]) +
                                   " is not");
          }
          repeated[k] = true;
        }
        break;
      }
      default:
        break;
    }
    const int64_t elements = result.NumElements();
    if (index == 0) layout_.elements = elements;
    if (elements != layout_.elements) {
      return Fail(index, "its result " + result.ToString() + " has " + std::to_string(elements) +
                             " elements, not the program's " + std::to_string(layout_.elements));
    }
    for (size_t k = 0; k < step.operands.size(); ++k) {
      const FusedOperand& operand = step.operands[k];
      const int64_t count = ShapeOf(operand).NumElements();
      if (!repeated[k] && count != elements) {
        return Fail(index, "operand " + Describe(operand) + " does not hold " +
                               std::to_string(elements) + " elements");
      }
      if (operand.is_input) layout_.input_period[static_cast<size_t>(operand.index)] = count;
    }
    layout_.step_shapes.push_back(result);
    layout_.step_dtypes.push_back(step.op == FusedOp::kCast ? step.dtype : DType::kFloat32);
    return Status::Ok();
  }

  // matmul(x0, x1) as statement 0: the matmul op's shapes (docs/OPS.md), rows M the leading
  // axes of an untransposed a flattened.
  Status TypeProduct(size_t index) {
    const FusedStep& step = program_.steps[index];
    if (index != 0 || !step.operands[0].is_input || step.operands[0].index != 0 ||
        !step.operands[1].is_input || step.operands[1].index != 1) {
      return Fail(index, "a product must be statement t0 and read x0 and x1");
    }
    const DType dtype = input_dtypes_[0];
    if ((dtype != DType::kFloat32 && dtype != DType::kBFloat16) || input_dtypes_[1] != dtype) {
      return Fail(index, "operands " + Describe(step.operands[0]) + " and " +
                             Describe(step.operands[1]) + " must be both float32 or both bfloat16");
    }
    const Shape& a = input_shapes_[0];
    const Shape& b = input_shapes_[1];
    if (b.rank() != 2 || a.rank() < 2 || (step.transpose_a && a.rank() != 2)) {
      return Fail(index, "a must have rank 2 (or more without transpose_a) and b rank 2, not " +
                             a.ToString() + " and " + b.ToString());
    }
    const int64_t k = step.transpose_a ? a.dim(0) : a.dim(-1);
    const int64_t b_k = step.transpose_b ? b.dim(1) : b.dim(0);
    const int64_t n = step.transpose_b ? b.dim(0) : b.dim(1);
    if (k != b_k) {
      return Fail(index, "inner extents differ: a " + a.ToString() + " and b " + b.ToString());
    }
    std::vector<int64_t> dims;
    if (step.transpose_a) {
      dims = {a.dim(1), n};
    } else {
      dims.assign(a.dims().begin(), a.dims().end() - 1);
      dims.push_back(n);
    }
    const Shape result(std::move(dims));
    layout_.elements = result.NumElements();
    layout_.product_rows = n > 0 ? layout_.elements / n : 0;
    layout_.product_columns = n;
    layout_.product_depth = k;
    layout_.input_period[0] = a.NumElements();
    layout_.input_period[1] = b.NumElements();
    layout_.step_shapes.push_back(result);
    layout_.step_dtypes.push_back(DType::kFloat32);
    return Status::Ok();
  }

  const FusedProgram& program_;
  const std::vector<Shape>& input_shapes_;
  const std::vector<DType>& input_dtypes_;
  FusedLayout layout_;
};

}  // namespace

bool IsFusableOpType(const std::string& op_type) {
  const OpInfo* info = FindOp(op_type);
  return info != nullptr && info->op != FusedOp::kMatmul;
}

bool IsFusableProductOpType(const std::string& op_type) {
  const OpInfo* info = FindOp(op_type);
  return info != nullptr && info->op == FusedOp::kMatmul;
}

bool FusedOpOf(const std::string& op_type, FusedOp* op) {
  const OpInfo* info = FindOp(op_type);
  if (info != nullptr) *op = info->op;
  return info != nullptr;
}

const char* FusedOpName(FusedOp op) {
  return InfoOf(op).name;
}

int FusedProgram::InputCount() const {
  int count = 0;
  for (const FusedStep& step : steps) {
    for (const FusedOperand& operand : step.operands) {
      if (operand.is_input) count = std::max(count, operand.index + 1);
    }
  }
  return std::max(count, after_input + 1);
}

StatusOr<FusedProgram> ParseFusedProgram(const std::string& text) {
  FusedProgram program;
  const std::vector<std::string> statements = Split(text, ';');
  for (size_t index = 0; index < statements.size(); ++index) {
    SOFTWIRE_RETURN_IF_ERROR(ParseStatement(statements[index], index, &program));
  }
  if (program.steps.empty() || program.outputs.empty()) {
    return InvalidArgumentError("fused program '" + text +
                                "' needs at least one statement and one output");
  }
  return program;
}

std::string FormatFusedProgram(const FusedProgram& program) {
  std::string text;
  for (size_t index = 0; index < program.steps.size(); ++index) {
    const FusedStep& step = program.steps[index];
    text += (index ? "; t" : "t") + std::to_string(index) + " = " + FusedOpName(step.op) + "(";
    for (size_t k = 0; k < step.operands.size(); ++k) {
      text += (k ? ", " : "") + OperandText(step.operands[k]);
    }
    if (step.op == FusedOp::kScale) {
      char factor[32];
      std::snprintf(factor, sizeof(factor), "%.17g", step.factor);
      text += std::string(", ") + factor;
    }
    if (step.op == FusedOp::kCast) text += std::string(", ") + DTypeName(step.dtype);
    if (step.transpose_a) text += std::string(", ") + kTransposeA;
    if (step.transpose_b) text += std::string(", ") + kTransposeB;
    text += ")";
  }
  for (size_t output = 0; output < program.outputs.size(); ++output) {
    text += "; y" + std::to_string(output) + " = t" + std::to_string(program.outputs[output]);
  }
  if (program.after_input >= 0) text += "; after x" + std::to_string(program.after_input);
  return text;
}

std::string FusedOpsLabel(const FusedProgram& program) {
  std::string label;
  for (const FusedStep& step : program.steps) {
    label += (label.empty() ? "" : "+") + std::string(FusedOpName(step.op));
  }
  return label;
}

StatusOr<FusedLayout> InferFusedLayout(const FusedProgram& program,
                                       const std::vector<Shape>& input_shapes,
                                       const std::vector<DType>& input_dtypes) {
  if (input_shapes.size() != input_dtypes.size()) {
    return InvalidArgumentError("fused program: " + std::to_string(input_shapes.size()) +
                                " input shapes but " + std::to_string(input_dtypes.size()) +
                                " dtypes");
  }
  return LayoutBuilder(program, input_shapes, input_dtypes).Build();
}

bool FusedMayWriteOver(const FusedProgram& program, int input, int output, bool float32_output) {
  if (input == program.after_input) return false;  // Its bytes belong to someone else.
  if (!program.HasProduct()) return true;
  if (input < 2 || output < 0 || output >= static_cast<int>(program.outputs.size())) return false;
  const bool product_kept =
      std::find(program.outputs.begin(), program.outputs.end(), 0) != program.outputs.end();
  if (!product_kept && float32_output) return false;  // An output is c's home.
  return program.outputs[static_cast<size_t>(output)] != 0;
}

int64_t FusedStepWork(const FusedStep& step) {
  const int64_t work = InfoOf(step.op).work;
  if (step.op == FusedOp::kAddN) return static_cast<int64_t>(step.operands.size()) - 1;
  return work;
}

}  // namespace softwire
