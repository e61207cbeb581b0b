// sgd_update and adam_update: several steps of the cpu kernel (float32 weight and state, updated
// in place) against the reference (double, explicit state), compared after every step.
//
// Tolerance: each step adds a few roundings of |w| and |lr * update| (update ~ |g| for sgd,
// ~1 for adam), and errors carry over through the weight and the state; after s steps the
// weight is within about 8 s u (|w| + 1) and so is the state (relative to its size). Weights
// and gradients here are ~N(0, 1): relative 8 s u, absolute 8 s u * 4.
#include <gtest/gtest.h>

#include <cmath>

#include "base/bfloat16.h"
#include "reference/kernels/reference_kernels.h"
#include "reference/kernels/testing/reference_kernel_runner.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/testing/threaded_test_runner.h"
#include "tests/kernels/cpu_reference_comparison.h"

namespace softwire {
namespace kernel_tests {
namespace {

using runtime::HostTensor;

constexpr int kSteps = 4;

void ExpectNearAll(const std::vector<float>& cpu, const std::vector<double>& reference,
                   double tolerance, const std::string& what) {
  ASSERT_EQ(cpu.size(), reference.size());
  int reported = 0;
  for (size_t i = 0; i < cpu.size() && reported < 5; ++i) {
    const double bound = tolerance * (4 + std::abs(reference[i]));
    if (std::abs(cpu[i] - reference[i]) > bound) {
      ADD_FAILURE() << what << "[" << i << "]: cpu " << cpu[i] << ", reference " << reference[i];
      ++reported;
    }
  }
}

// Runs kSteps updates with fresh gradients on both implementations and compares weight and
// state after each. `state_per_element` is 1 (sgd) or 2 (adam).
void ExpectUpdatesMatch(const std::string& op_type, const std::vector<proto::Attribute>& attributes,
                        int state_per_element, runtime::ParallelRunner* runner) {
  const Shape shape({301, 257});
  const int64_t elements = shape.NumElements();
  runtime::KernelRegistry registry;
  runtime::RegisterCpuKernels(&registry);
  runtime::KernelHarness harness(op_type, attributes,
                                 {RandomFloats(shape, 1), RandomFloats(shape, 2)}, {});
  harness.actor().set_kind(proto::ACTOR_KIND_UPDATE);
  harness.actor().set_state_bytes(elements * state_per_element * 4);
  Status created = harness.Create(registry);
  ASSERT_TRUE(created.ok()) << created;

  const reference::ReferenceKernelTable table = reference::MakeReferenceKernels();
  reference::ReferenceTensor weight = ToReference(harness.input(1));
  std::vector<double> state(elements * state_per_element, 0.0);
  for (int step = 1; step <= kSteps; ++step) {
    harness.input(0) = RandomFloats(shape, 10 + step);  // This step's gradient.
    reference::ReferenceTensor gradient = ToReference(harness.input(0));
    StatusOr<std::vector<reference::ReferenceTensor>> updated = reference::RunReferenceKernel(
        table, op_type, attributes, {gradient, weight}, {}, &state, step, {weight});
    ASSERT_TRUE(updated.ok()) << updated.status();
    weight = (*updated)[0];
    Status ran = harness.Run(runner, /*firing=*/step - 1);
    ASSERT_TRUE(ran.ok()) << ran;
    const double tolerance = 8 * step * kFloatEpsilon;
    SCOPED_TRACE("step " + std::to_string(step));
    ExpectNearAll(harness.input(1).floats, weight.values, tolerance, "weight");
    ExpectNearAll(harness.state(), state, tolerance, "state");
  }
}

TEST(OptimizerKernels, SgdWithMomentumAndWeightDecayMatchesTheReferenceOverSteps) {
  std::vector<proto::Attribute> attributes = {
      FloatAttribute("learning_rate", 0.05), FloatAttribute("momentum", 0.9),
      FloatAttribute("weight_decay", 0.01), FloatAttribute("gradient_scale", 0.25)};
  runtime::SerialRunner serial;
  runtime::ThreadedTestRunner uneven(3, runtime::ThreadedTestRunner::Split::kUneven);
  ExpectUpdatesMatch("sgd_update", attributes, 1, &serial);
  ExpectUpdatesMatch("sgd_update", attributes, 1, &uneven);
  EXPECT_GT(uneven.parallel_calls(), 0);
}

TEST(OptimizerKernels, PlainSgdStoresTheGradientAsItsState) {
  runtime::SerialRunner serial;
  ExpectUpdatesMatch("sgd_update", {FloatAttribute("learning_rate", 0.1)}, 1, &serial);
}

TEST(OptimizerKernels, AdamWithWeightDecayMatchesTheReferenceOverSteps) {
  std::vector<proto::Attribute> attributes = {
      FloatAttribute("learning_rate", 0.01), FloatAttribute("beta1", 0.8),
      FloatAttribute("beta2", 0.99), FloatAttribute("weight_decay", 0.1),
      FloatAttribute("gradient_scale", 0.5)};
  runtime::SerialRunner serial;
  runtime::ThreadedTestRunner uneven(3, runtime::ThreadedTestRunner::Split::kUneven);
  ExpectUpdatesMatch("adam_update", attributes, 2, &serial);
  ExpectUpdatesMatch("adam_update", attributes, 2, &uneven);
  EXPECT_GT(uneven.parallel_calls(), 0);
}

// With a third input (the variable's bfloat16 copy, fold_weight_casts): the update writes the
// same weights and state as without, bit for bit, and the copy holds each updated weight rounded
// to bfloat16 as the cast rounds it (docs/OPS.md sgd_update), after every step.
void ExpectTheCopyIsTheRoundedWeight(const std::string& op_type,
                                     const std::vector<proto::Attribute>& attributes,
                                     int state_per_element, runtime::ParallelRunner* runner) {
  const Shape shape({301, 257});
  const int64_t elements = shape.NumElements();
  runtime::KernelRegistry registry;
  runtime::RegisterCpuKernels(&registry);
  runtime::KernelHarness plain(op_type, attributes,
                               {RandomFloats(shape, 1), RandomFloats(shape, 2)}, {});
  runtime::KernelHarness with_copy(
      op_type, attributes,
      {RandomFloats(shape, 1), RandomFloats(shape, 2),
       runtime::HostTensor::BFloat16s(shape, std::vector<float>(elements, 0.0f))},
      {});
  for (runtime::KernelHarness* harness : {&plain, &with_copy}) {
    harness->actor().set_kind(proto::ACTOR_KIND_UPDATE);
    harness->actor().set_state_bytes(elements * state_per_element * 4);
    Status created = harness->Create(registry);
    ASSERT_TRUE(created.ok()) << created;
  }
  for (int step = 1; step <= kSteps; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    plain.input(0) = RandomFloats(shape, 10 + step);
    with_copy.input(0) = RandomFloats(shape, 10 + step);
    ASSERT_TRUE(plain.Run(runner, step - 1).ok());
    ASSERT_TRUE(with_copy.Run(runner, step - 1).ok());
    ASSERT_EQ(with_copy.input(1).floats, plain.input(1).floats);
    ASSERT_EQ(with_copy.state(), plain.state());
    const std::vector<BFloat16>& copy = with_copy.input(2).bf16s;
    ASSERT_EQ(copy.size(), static_cast<size_t>(elements));
    for (int64_t i = 0; i < elements; ++i) {
      ASSERT_EQ(copy[i].bits, ToBFloat16(plain.input(1).floats[i]).bits) << "element " << i;
    }
  }
}

TEST(OptimizerKernels, AnUpdateWithACopyWritesTheRoundedWeightAndTheSameWeight) {
  runtime::ThreadedTestRunner uneven(3, runtime::ThreadedTestRunner::Split::kUneven);
  ExpectTheCopyIsTheRoundedWeight(
      "sgd_update",
      {FloatAttribute("learning_rate", 0.05), FloatAttribute("momentum", 0.9),
       FloatAttribute("weight_decay", 0.01)},
      1, &uneven);
  ExpectTheCopyIsTheRoundedWeight(
      "adam_update", {FloatAttribute("learning_rate", 0.01), FloatAttribute("weight_decay", 0.1)},
      2, &uneven);
}

}  // namespace
}  // namespace kernel_tests
}  // namespace softwire
