#include "reference/kernels/testing/finite_differences.h"

#include <glog/logging.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "base/random.h"

namespace softwire {
namespace reference {

const ReferenceKernelTable& ReferenceTable() {
  static const ReferenceKernelTable* table = new ReferenceKernelTable(MakeReferenceKernels());
  return *table;
}

std::vector<double> Normals(int64_t count, uint64_t seed) {
  std::vector<double> values(count);
  for (int64_t i = 0; i < count; ++i) values[i] = NormalAt(seed, i);
  return values;
}

ReferenceTensor RandomTensor(const Shape& shape, uint64_t seed) {
  return FloatTensor(shape, Normals(shape.NumElements(), seed));
}

std::vector<ReferenceTensor> Apply(const std::string& op_type,
                                   const std::vector<proto::Attribute>& attributes,
                                   const std::vector<ReferenceTensor>& inputs,
                                   const std::vector<Shape>& output_shapes) {
  StatusOr<std::vector<ReferenceTensor>> outputs =
      RunReferenceKernel(ReferenceTable(), op_type, attributes, inputs, output_shapes);
  CHECK(outputs.ok()) << outputs.status();
  return *outputs;
}

namespace {

double WeightedSum(const Forward& forward, const std::vector<ReferenceTensor>& inputs,
                   const std::vector<double>& weights) {
  const ReferenceTensor y =
      Apply(forward.op_type, forward.attributes, inputs, forward.output_shapes)[forward.output];
  return std::inner_product(weights.begin(), weights.end(), y.values.begin(), 0.0);
}

}  // namespace

std::vector<double> NumericGradient(const Forward& forward, std::vector<ReferenceTensor> inputs,
                                    size_t wrt, const std::vector<double>& weights) {
  std::vector<double> gradient(inputs[wrt].values.size());
  for (size_t i = 0; i < gradient.size(); ++i) {
    const double original = inputs[wrt].values[i];
    inputs[wrt].values[i] = original + kFiniteDifferenceStep;
    const double plus = WeightedSum(forward, inputs, weights);
    inputs[wrt].values[i] = original - kFiniteDifferenceStep;
    const double minus = WeightedSum(forward, inputs, weights);
    inputs[wrt].values[i] = original;
    gradient[i] = (plus - minus) / (2 * kFiniteDifferenceStep);
  }
  return gradient;
}

void ExpectGradient(const Forward& forward, const std::vector<ReferenceTensor>& inputs, size_t wrt,
                    const std::vector<double>& weights, const ReferenceTensor& analytic) {
  ASSERT_EQ(analytic.shape, inputs[wrt].shape);
  std::vector<double> numeric = NumericGradient(forward, inputs, wrt, weights);
  for (size_t i = 0; i < numeric.size(); ++i) {
    EXPECT_NEAR(analytic.values[i], numeric[i], kGradientTolerance * (1 + std::abs(numeric[i])))
        << forward.op_type << ": d/d input " << wrt << " at flat index " << i;
  }
}

}  // namespace reference
}  // namespace softwire
