// softmax (optionally causal), softmax_grad, softmax_cross_entropy, its gradient and accuracy,
// all over the last axis, written as the formulas of docs/OPS.md.
#include <cmath>

#include "reference/kernels/reference_kernel_families.h"
#include "reference/kernels/reference_op_helpers.h"

namespace softwire {
namespace reference {
namespace {

// softmax of x[0..valid) into y, zeros in y[valid..length).
void SoftmaxRow(const double* x, double* y, int64_t valid, int64_t length) {
  double maximum = -INFINITY;
  for (int64_t j = 0; j < valid; ++j) maximum = std::max(maximum, x[j]);
  double sum = 0;
  for (int64_t j = 0; j < valid; ++j) sum += std::exp(x[j] - maximum);
  for (int64_t j = 0; j < length; ++j) y[j] = j < valid ? std::exp(x[j] - maximum) / sum : 0.0;
}

// log(sum(exp(x))) computed stably.
double LogSumExp(const double* x, int64_t length) {
  double maximum = -INFINITY;
  for (int64_t j = 0; j < length; ++j) maximum = std::max(maximum, x[j]);
  double sum = 0;
  for (int64_t j = 0; j < length; ++j) sum += std::exp(x[j] - maximum);
  return maximum + std::log(sum);
}

// Checks logits [..., V] against labels [...] (every label in [0, V)); returns V.
StatusOr<int64_t> CheckLogitsAndLabels(const ReferenceKernelCall& call, size_t logits_input,
                                       size_t labels_input) {
  const ReferenceTensor& logits = Input(call, logits_input);
  const ReferenceTensor& labels = Input(call, labels_input);
  if (logits.shape.rank() < 1 || labels.shape != LeadingShape(logits.shape)) {
    return OpError(call, "labels " + labels.shape.ToString() + " do not match logits " +
                             logits.shape.ToString());
  }
  const int64_t classes = logits.shape.dim(-1);
  for (size_t i = 0; i < labels.values.size(); ++i) {
    const double label = labels.values[i];
    if (!(label >= 0 && label < static_cast<double>(classes))) {
      return OpError(call, "labels[" + std::to_string(i) +
                               "] = " + std::to_string(static_cast<int64_t>(label)) +
                               " is outside [0, " + std::to_string(classes) + ")");
    }
  }
  return classes;
}

Status Softmax(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const bool causal = attributes.Bool("causal", false);
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 1));
  const ReferenceTensor& x = Input(call, 0);
  if (x.shape.rank() < 1) return OpError(call, "x must have rank >= 1");
  if (causal && (x.shape.rank() < 2 || x.shape.dim(-1) != x.shape.dim(-2))) {
    return OpError(call, "causal softmax needs [..., T, T], not " + x.shape.ToString());
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, x.shape));
  const int64_t length = x.shape.dim(-1);
  const int64_t rows = x.shape.NumElements(0, x.shape.rank() - 1);
  for (int64_t row = 0; row < rows; ++row) {
    // In a causal [T, T] matrix, row i (= row mod T) sees columns 0..i.
    const int64_t valid = causal ? row % length + 1 : length;
    SoftmaxRow(x.values.data() + row * length, Output(call, 0).values.data() + row * length, valid,
               length);
  }
  return Status::Ok();
}

Status SoftmaxGrad(const ReferenceKernelCall& call) {
  SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(*call.def).Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 2, 1));
  const ReferenceTensor& dy = Input(call, 0);
  const ReferenceTensor& y = Input(call, 1);
  if (dy.shape.rank() < 1 || y.shape != dy.shape) return OpError(call, "dy and y must match");
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, dy.shape));
  const int64_t length = dy.shape.dim(-1);
  const int64_t rows = dy.shape.NumElements(0, dy.shape.rank() - 1);
  for (int64_t row = 0; row < rows; ++row) {
    double dot = 0;
    for (int64_t j = 0; j < length; ++j) {
      dot += dy.values[row * length + j] * y.values[row * length + j];
    }
    for (int64_t j = 0; j < length; ++j) {
      const int64_t i = row * length + j;
      Output(call, 0).values[i] = y.values[i] * (dy.values[i] - dot);
    }
  }
  return Status::Ok();
}

Status SoftmaxCrossEntropy(const ReferenceKernelCall& call) {
  SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(*call.def).Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 2, 1));
  SOFTWIRE_ASSIGN_OR_RETURN(int64_t classes, CheckLogitsAndLabels(call, 0, 1));
  const ReferenceTensor& logits = Input(call, 0);
  const ReferenceTensor& labels = Input(call, 1);
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, labels.shape));
  for (size_t row = 0; row < labels.values.size(); ++row) {
    const double* x = logits.values.data() + row * classes;
    const int64_t label = static_cast<int64_t>(labels.values[row]);
    Output(call, 0).values[row] = LogSumExp(x, classes) - x[label];
  }
  return Status::Ok();
}

Status SoftmaxCrossEntropyGrad(const ReferenceKernelCall& call) {
  SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(*call.def).Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 3, 1));
  SOFTWIRE_ASSIGN_OR_RETURN(int64_t classes, CheckLogitsAndLabels(call, 1, 2));
  const ReferenceTensor& dloss = Input(call, 0);
  const ReferenceTensor& logits = Input(call, 1);
  const ReferenceTensor& labels = Input(call, 2);
  if (dloss.shape != labels.shape) return OpError(call, "dloss must be shaped like labels");
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, logits.shape));
  for (size_t row = 0; row < labels.values.size(); ++row) {
    double* dx = Output(call, 0).values.data() + row * classes;
    SoftmaxRow(logits.values.data() + row * classes, dx, classes, classes);
    const int64_t label = static_cast<int64_t>(labels.values[row]);
    for (int64_t v = 0; v < classes; ++v) {
      dx[v] = dloss.values[row] * (dx[v] - (v == label ? 1.0 : 0.0));
    }
  }
  return Status::Ok();
}

Status Accuracy(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  // docs/OPS.md, "Physical attributes": the logical row count when the rows are split.
  const int64_t divisor = attributes.Int("divisor", 0);
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  if (divisor < 0) return OpError(call, "divisor must be >= 0");
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 2, 1));
  SOFTWIRE_ASSIGN_OR_RETURN(int64_t classes, CheckLogitsAndLabels(call, 0, 1));
  const ReferenceTensor& logits = Input(call, 0);
  const ReferenceTensor& labels = Input(call, 1);
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, Shape()));
  const size_t rows = labels.values.size();
  size_t correct = 0;
  for (size_t row = 0; row < rows; ++row) {
    const double* x = logits.values.data() + row * classes;
    int64_t best = 0;  // The first maximum wins ties.
    for (int64_t v = 1; v < classes; ++v) {
      if (x[v] > x[best]) best = v;
    }
    if (best == static_cast<int64_t>(labels.values[row])) ++correct;
  }
  const double by = divisor > 0 ? static_cast<double>(divisor) : static_cast<double>(rows);
  Output(call, 0).values[0] = by == 0 ? 0.0 : static_cast<double>(correct) / by;
  return Status::Ok();
}

}  // namespace

void RegisterReferenceSoftmaxKernels(ReferenceKernelTable* table) {
  table->Register("softmax", Softmax);
  table->Register("softmax_grad", SoftmaxGrad);
  table->Register("softmax_cross_entropy", SoftmaxCrossEntropy);
  table->Register("softmax_cross_entropy_grad", SoftmaxCrossEntropyGrad);
  table->Register("accuracy", Accuracy);
}

}  // namespace reference
}  // namespace softwire
