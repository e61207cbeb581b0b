// The finite-difference harness of the reference gradient tests (reference_gradient_test,
// reference_convolution_gradient_test): a gradient op's output checked against central
// differences of the reference forward op, in double precision. For random weights w, the
// gradient with respect to inputs[wrt] must equal d/d inputs[wrt] of sum(w * forward(inputs)).
//
//   ReferenceTensor x = RandomTensor(shape, 1);
//   std::vector<double> w = Normals(shape.NumElements(), 2);
//   ReferenceTensor dx = Apply("gelu_grad", {}, {FloatTensor(shape, w), x}, {shape})[0];
//   ExpectGradient({"gelu", {}, {shape}}, {x}, 0, w, dx);
//
// Step and tolerance (the tests' headers argue them): h = 1e-5, so the central difference has
// truncation error ~h^2 |f'''| ~ 1e-10 and rounding error ~1e-16 |sum| / h ~ 1e-10 for sums of
// O(10) terms; 1e-6 relative plus 1e-6 absolute leaves four orders of margin while any wrong
// term is off by O(1).
#ifndef SOFTWIRE_REFERENCE_KERNELS_TESTING_FINITE_DIFFERENCES_H_
#define SOFTWIRE_REFERENCE_KERNELS_TESTING_FINITE_DIFFERENCES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "reference/kernels/testing/reference_kernel_runner.h"

namespace softwire {
namespace reference {

constexpr double kFiniteDifferenceStep = 1e-5;
constexpr double kGradientTolerance = 1e-6;

// The reference kernels, made once per process (never freed: tests only).
const ReferenceKernelTable& ReferenceTable();

// `count` standard normal values of `seed` (base/random.h NormalAt).
std::vector<double> Normals(int64_t count, uint64_t seed);

// A float32 tensor of `shape` holding Normals(shape.NumElements(), seed).
ReferenceTensor RandomTensor(const Shape& shape, uint64_t seed);

// The outputs of one reference op; CHECK-fails when the op refuses its inputs (a test's bug).
std::vector<ReferenceTensor> Apply(const std::string& op_type,
                                   const std::vector<proto::Attribute>& attributes,
                                   const std::vector<ReferenceTensor>& inputs,
                                   const std::vector<Shape>& output_shapes);

// A forward op: op type, attributes, and the output (of `output_shapes`) whose weighted sum is
// differentiated.
struct Forward {
  std::string op_type;
  std::vector<proto::Attribute> attributes;
  std::vector<Shape> output_shapes;
  size_t output = 0;
};

// d/d inputs[wrt] of sum(weights * forward(inputs)[forward.output]) by central differences.
std::vector<double> NumericGradient(const Forward& forward, std::vector<ReferenceTensor> inputs,
                                    size_t wrt, const std::vector<double>& weights);

// Expects `analytic` to have inputs[wrt]'s shape and to equal NumericGradient within
// kGradientTolerance * (1 + |numeric|), element by element; a failure names the op, the input
// and the flat index.
void ExpectGradient(const Forward& forward, const std::vector<ReferenceTensor>& inputs, size_t wrt,
                    const std::vector<double>& weights, const ReferenceTensor& analytic);

}  // namespace reference
}  // namespace softwire

#endif  // SOFTWIRE_REFERENCE_KERNELS_TESTING_FINITE_DIFFERENCES_H_
