// Runs an op through its cpu kernel (float32) and its reference kernel (double) on the same
// inputs, and checks every output element of the cpu kernel against the reference:
//
//   |cpu - reference| <= absolute + relative * |reference| + per_term * magnitude
//
// where magnitude is the reference op applied to the absolute values of the float inputs. For
// sums (matmul, reductions) magnitude is sum |terms|, the quantity that bounds float32
// accumulation error: recursive or blocked summation of n terms errs by at most about
// n * 2^-24 * sum |terms|, whatever the order.
#ifndef SOFTWIRE_TESTS_KERNELS_CPU_REFERENCE_COMPARISON_H_
#define SOFTWIRE_TESTS_KERNELS_CPU_REFERENCE_COMPARISON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/plan.pb.h"
#include "reference/kernels/reference_tensor.h"
#include "runtime/kernels/parallel_runner.h"
#include "runtime/kernels/testing/kernel_harness.h"

namespace softwire {
namespace kernel_tests {

// Unit roundoff of float32.
constexpr double kFloatEpsilon = 1.0 / (1 << 24);

struct Tolerance {
  double relative = 0;
  double absolute = 0;
  double per_term = 0;  // Times the magnitude (see above); 0 skips computing it.
};

// A float32 result that is the correctly rounded value of an exact expression of at most a few
// roundings (add, multiply, copy): within 4 units of roundoff.
constexpr Tolerance kRounding = {4 * kFloatEpsilon, 0, 0};

// Sums of `terms` float32 terms in any order (see above), plus the final rounding.
Tolerance SumTolerance(int64_t terms);

// The worst relative error (against the sum of |terms|) of vector_math.h's 16-lane row sums of
// n terms: each lane adds n / 16 terms in order, then the lanes and the tail are added.
double RowSumError(int64_t n);

// One op to run: its type, attributes, inputs and output shapes.
struct OpCase {
  std::string op_type;
  std::vector<proto::Attribute> attributes;
  std::vector<runtime::HostTensor> inputs;
  std::vector<Shape> output_shapes;
  // Per output, the magnitude that Tolerance::per_term multiplies, when the reference op on
  // |inputs| does not give it (a non-linear op). Empty: computed from |inputs|.
  std::vector<std::vector<double>> magnitudes = {};
  // Per output, its dtype. Empty: every output float32.
  std::vector<DType> output_dtypes = {};
};

// Standard-normal float32 values (counter-based, base/random.h) and uniform int32 in [0, bound).
runtime::HostTensor RandomFloats(const Shape& shape, uint64_t seed);
runtime::HostTensor RandomInts(const Shape& shape, int64_t bound, uint64_t seed);
// RandomFloats rounded to bfloat16.
runtime::HostTensor RandomBFloat16s(const Shape& shape, uint64_t seed);

// Unit roundoff of bfloat16 (8 significant bits).
constexpr double kBFloat16Epsilon = 1.0 / (1 << 8);

reference::ReferenceTensor ToReference(const runtime::HostTensor& tensor);

// Runs `op` on the cpu kernel with `runner` and on the reference kernel and expects the outputs
// to agree within `tolerance` (gtest failures name the op, the output and the flat index).
void ExpectCpuMatchesReference(const OpCase& op, const Tolerance& tolerance,
                               runtime::ParallelRunner* runner);
// With one tolerance per output.
void ExpectCpuMatchesReference(const OpCase& op, const std::vector<Tolerance>& tolerances,
                               runtime::ParallelRunner* runner);

// The same with a serial runner, a 3-thread runner splitting loops unevenly (ignoring
// min_chunk) and a 2-thread runner splitting them evenly. Returns how many loops the kernel
// handed to the uneven runner, so tests of large shapes can assert that the parallel path ran.
int64_t ExpectCpuMatchesReferenceOnEveryRunner(const OpCase& op, const Tolerance& tolerance);
int64_t ExpectCpuMatchesReferenceOnEveryRunner(const OpCase& op,
                                               const std::vector<Tolerance>& tolerances);

// The cpu outputs of `op`, run with `runner`; fails the test on a kernel error.
std::vector<runtime::HostTensor> RunCpu(const OpCase& op, runtime::ParallelRunner* runner);

}  // namespace kernel_tests
}  // namespace softwire

#endif  // SOFTWIRE_TESTS_KERNELS_CPU_REFERENCE_COMPARISON_H_
