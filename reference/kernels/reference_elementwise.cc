// Elementwise reference kernels: add, sub, mul (broadcasting), scale, identity, reshape, fill,
// add_n, relu, relu_grad, gelu, gelu_grad, bias_add, bias_add_grad and broadcast_axes.
#include <cmath>
#include <functional>

#include "reference/kernels/reference_kernel_families.h"
#include "reference/kernels/reference_op_helpers.h"

namespace softwire {
namespace reference {
namespace {

constexpr double kSqrtTwoOverPi = 0.79788456080286535588;  // sqrt(2 / pi).
constexpr double kGeluCubic = 0.044715;

ReferenceKernel Broadcasting(std::function<double(double, double)> function) {
  return [function](const ReferenceKernelCall& call) -> Status {
    SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(*call.def).Finish());
    SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 2, 1));
    const ReferenceTensor& a = Input(call, 0);
    const ReferenceTensor& b = Input(call, 1);
    Shape c;
    if (!BroadcastShapes(a.shape, b.shape, &c)) {
      return OpError(call, a.shape.ToString() + " and " + b.shape.ToString() + " do not broadcast");
    }
    SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, c));
    std::vector<double>& out = Output(call, 0).values;
    for (int64_t flat = 0; flat < c.NumElements(); ++flat) {
      std::vector<int64_t> index = Unravel(flat, c);
      out[flat] = function(a.values[BroadcastSource(index, a.shape)],
                           b.values[BroadcastSource(index, b.shape)]);
    }
    return Status::Ok();
  };
}

// y = function(x), same shape.
ReferenceKernel Unary(std::function<double(double)> function) {
  return [function](const ReferenceKernelCall& call) -> Status {
    SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(*call.def).Finish());
    SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 1));
    const ReferenceTensor& x = Input(call, 0);
    SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, x.shape));
    for (size_t i = 0; i < x.values.size(); ++i) Output(call, 0).values[i] = function(x.values[i]);
    return Status::Ok();
  };
}

// dx = function(dy, saved), all of one shape.
ReferenceKernel Gradient(std::function<double(double, double)> function) {
  return [function](const ReferenceKernelCall& call) -> Status {
    SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(*call.def).Finish());
    SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 2, 1));
    const ReferenceTensor& dy = Input(call, 0);
    const ReferenceTensor& saved = Input(call, 1);
    if (saved.shape != dy.shape) return OpError(call, "inputs differ in shape");
    SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, dy.shape));
    for (size_t i = 0; i < dy.values.size(); ++i) {
      Output(call, 0).values[i] = function(dy.values[i], saved.values[i]);
    }
    return Status::Ok();
  };
}

double Gelu(double x) {
  return 0.5 * x * (1.0 + std::tanh(kSqrtTwoOverPi * (x + kGeluCubic * x * x * x)));
}

double GeluDerivative(double x) {
  const double t = std::tanh(kSqrtTwoOverPi * (x + kGeluCubic * x * x * x));
  return 0.5 * (1.0 + t) +
         0.5 * x * (1.0 - t * t) * kSqrtTwoOverPi * (1.0 + 3.0 * kGeluCubic * x * x);
}

Status Scale(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const double factor = attributes.RequiredFloat("factor");
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 1));
  const ReferenceTensor& x = Input(call, 0);
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, x.shape));
  for (size_t i = 0; i < x.values.size(); ++i) Output(call, 0).values[i] = factor * x.values[i];
  return Status::Ok();
}

Status Reshape(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  std::vector<int64_t> dims = attributes.RequiredInts("shape");
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 1));
  const ReferenceTensor& x = Input(call, 0);
  int64_t known = 1;
  int inferred = -1;
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    if (dims[axis] == -1 && inferred < 0) {
      inferred = static_cast<int>(axis);
    } else if (dims[axis] < 0) {
      return OpError(call, "shape " + Shape(dims).ToString() + " is not a shape");
    } else {
      known *= dims[axis];
    }
  }
  if (inferred >= 0) {
    if (known == 0 || x.shape.NumElements() % known != 0) {
      return OpError(call, "cannot infer the -1 of " + Shape(dims).ToString());
    }
    dims[inferred] = x.shape.NumElements() / known;
  }
  if (Shape(dims).NumElements() != x.shape.NumElements()) {
    return OpError(call, "shape " + Shape(dims).ToString() + " does not fit " + x.shape.ToString());
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, Shape(dims)));
  Output(call, 0).values = x.values;
  return Status::Ok();
}

Status Fill(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  Shape shape(attributes.RequiredInts("shape"));
  const double value = attributes.RequiredFloat("value");
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 0, 1));
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, shape));
  for (double& y : Output(call, 0).values) y = value;
  return Status::Ok();
}

Status AddN(const ReferenceKernelCall& call) {
  SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(*call.def).Finish());
  if (call.inputs.size() < 2) return OpError(call, "needs two or more inputs");
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, call.inputs.size(), 1));
  const Shape& shape = Input(call, 0).shape;
  for (const ReferenceTensor* input : call.inputs) {
    if (input->shape != shape) return OpError(call, "inputs differ in shape");
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, shape));
  std::vector<double>& y = Output(call, 0).values;
  for (size_t i = 0; i < y.size(); ++i) {
    double sum = 0;
    for (const ReferenceTensor* input : call.inputs) sum += input->values[i];
    y[i] = sum;
  }
  return Status::Ok();
}

Status BiasAdd(const ReferenceKernelCall& call) {
  SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(*call.def).Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 2, 1));
  const ReferenceTensor& x = Input(call, 0);
  const ReferenceTensor& bias = Input(call, 1);
  if (x.shape.rank() < 1 || bias.shape != Shape({x.shape.dim(-1)})) {
    return OpError(call,
                   "bias " + bias.shape.ToString() + " does not match x " + x.shape.ToString());
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, x.shape));
  const int64_t channels = x.shape.dim(-1);
  for (size_t i = 0; i < x.values.size(); ++i) {
    Output(call, 0).values[i] = x.values[i] + bias.values[i % channels];
  }
  return Status::Ok();
}

Status BiasAddGrad(const ReferenceKernelCall& call) {
  SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(*call.def).Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 1));
  const ReferenceTensor& dy = Input(call, 0);
  if (dy.shape.rank() < 1) return OpError(call, "dy must have rank >= 1");
  const int64_t channels = dy.shape.dim(-1);
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, Shape({channels})));
  std::vector<double>& dbias = Output(call, 0).values;
  for (double& value : dbias) value = 0;
  for (size_t i = 0; i < dy.values.size(); ++i) dbias[i % channels] += dy.values[i];
  return Status::Ok();
}

Status BroadcastAxes(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  Shape y_shape(attributes.RequiredInts("shape"));
  std::vector<int64_t> axes = attributes.RequiredInts("axes");
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 1));
  std::vector<bool> is_axis;
  SOFTWIRE_RETURN_IF_ERROR(NormalizeAxes(call, axes, y_shape.rank(), &is_axis));
  std::vector<int64_t> kept;
  std::vector<int64_t> unit;
  for (int axis = 0; axis < y_shape.rank(); ++axis) {
    if (!is_axis[axis]) kept.push_back(y_shape.dim(axis));
    unit.push_back(is_axis[axis] ? 1 : y_shape.dim(axis));
  }
  const ReferenceTensor& x = Input(call, 0);
  if (x.shape != Shape(kept) && x.shape != Shape(unit)) {
    return OpError(call, "x " + x.shape.ToString() + " does not match " + y_shape.ToString() +
                             " without its broadcast axes");
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, y_shape));
  for (int64_t flat = 0; flat < y_shape.NumElements(); ++flat) {
    std::vector<int64_t> index = Unravel(flat, y_shape);
    for (int axis = 0; axis < y_shape.rank(); ++axis) {
      if (is_axis[axis]) index[axis] = 0;
    }
    Output(call, 0).values[flat] = x.values[Ravel(index, Shape(unit))];
  }
  return Status::Ok();
}

}  // namespace

void RegisterReferenceElementwiseKernels(ReferenceKernelTable* table) {
  table->Register("add", Broadcasting([](double a, double b) { return a + b; }));
  table->Register("sub", Broadcasting([](double a, double b) { return a - b; }));
  table->Register("mul", Broadcasting([](double a, double b) { return a * b; }));
  table->Register("scale", Scale);
  table->Register("identity", Unary([](double x) { return x; }));
  table->Register("reshape", Reshape);
  table->Register("fill", Fill);
  table->Register("add_n", AddN);
  table->Register("relu", Unary([](double x) { return x > 0 ? x : 0.0; }));
  table->Register("relu_grad", Gradient([](double dy, double y) { return y > 0 ? dy : 0.0; }));
  table->Register("gelu", Unary(Gelu));
  table->Register("gelu_grad",
                  Gradient([](double dy, double x) { return dy * GeluDerivative(x); }));
  table->Register("bias_add", BiasAdd);
  table->Register("bias_add_grad", BiasAddGrad);
  table->Register("broadcast_axes", BroadcastAxes);
}

}  // namespace reference
}  // namespace softwire
