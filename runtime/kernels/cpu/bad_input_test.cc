// Kernels refuse bad definitions when they are created (InvalidArgument naming the op type and
// the problem) and bad data when they run (InvalidArgument naming the tensor, the flat index and
// the value), and never write outputs or crash on either.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/testing/kernel_harness.h"
#include "runtime/kernels/testing/threaded_test_runner.h"

namespace softwire {
namespace runtime {
namespace {

class BadInputTest : public ::testing::Test {
 protected:
  BadInputTest() { RegisterCpuKernels(&registry_); }

  // The status of creating `op_type` over tensors of the given shapes.
  Status CreateStatus(const std::string& op_type, const std::vector<proto::Attribute>& attributes,
                      std::vector<HostTensor> inputs, std::vector<HostTensor> outputs) {
    KernelHarness harness(op_type, attributes, std::move(inputs), std::move(outputs));
    return harness.Create(registry_);
  }

  static HostTensor Floats(const Shape& shape) { return HostTensor::Zeros(DType::kFloat32, shape); }
  static HostTensor Ints(const Shape& shape) { return HostTensor::Zeros(DType::kInt32, shape); }

  // Expects InvalidArgument whose message contains every one of `parts`.
  static void ExpectInvalid(const Status& status, const std::vector<std::string>& parts) {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status;
    for (const std::string& part : parts) {
      EXPECT_NE(status.message().find(part), std::string::npos)
          << "'" << part << "' not in: " << status.message();
    }
  }

  KernelRegistry registry_;
};

TEST_F(BadInputTest, UnknownMissingAndMistypedAttributesAreRefusedAtCreation) {
  ExpectInvalid(CreateStatus("relu", {FloatAttribute("alpha", 0.1)}, {Floats(Shape({2}))},
                             {Floats(Shape({2}))}),
                {"actor 'relu_under_test'", "relu: unknown attribute 'alpha'"});
  ExpectInvalid(CreateStatus("scale", {}, {Floats(Shape({2}))}, {Floats(Shape({2}))}),
                {"scale: required attribute 'factor'"});
  ExpectInvalid(
      CreateStatus("matmul", {IntAttribute("transpose_a", 1)},
                   {Floats(Shape({2, 2})), Floats(Shape({2, 2}))}, {Floats(Shape({2, 2}))}),
      {"matmul: attribute 'transpose_a' must be a bool"});
  ExpectInvalid(CreateStatus("relu", {FloatAttribute("alpha", 1), FloatAttribute("alpha", 2)},
                             {Floats(Shape({2}))}, {Floats(Shape({2}))}),
                {"given twice"});
}

TEST_F(BadInputTest, InconsistentShapesAreRefusedAtCreation) {
  ExpectInvalid(CreateStatus("matmul", {}, {Floats(Shape({2, 3})), Floats(Shape({4, 5}))},
                             {Floats(Shape({2, 5}))}),
                {"matmul: inner extents differ"});
  ExpectInvalid(CreateStatus("matmul", {}, {Floats(Shape({2, 3})), Floats(Shape({3, 5}))},
                             {Floats(Shape({2, 6}))}),
                {"output c has shape [2, 6] but must be [2, 5]"});
  ExpectInvalid(CreateStatus("bias_add", {}, {Floats(Shape({2, 3})), Floats(Shape({4}))},
                             {Floats(Shape({2, 3}))}),
                {"bias_add: input bias"});
  ExpectInvalid(
      CreateStatus("add", {}, {Floats(Shape({2, 3})), Floats(Shape({2}))}, {Floats(Shape({2, 3}))}),
      {"do not broadcast"});
  ExpectInvalid(CreateStatus("reshape", {IntsAttribute("shape", {4, -1})}, {Floats(Shape({6}))},
                             {Floats(Shape({4, 2}))}),
                {"reshape: cannot infer"});
  ExpectInvalid(CreateStatus("transpose", {IntsAttribute("perm", {0, 0})}, {Floats(Shape({2, 3}))},
                             {Floats(Shape({2, 2}))}),
                {"not a permutation"});
  ExpectInvalid(CreateStatus("reduce_sum", {IntsAttribute("axes", {2})}, {Floats(Shape({2, 3}))},
                             {Floats(Shape({2}))}),
                {"axis 2 is out of range"});
  ExpectInvalid(CreateStatus("softmax", {BoolAttribute("causal", true)}, {Floats(Shape({2, 3}))},
                             {Floats(Shape({2, 3}))}),
                {"[..., T, T]"});
  ExpectInvalid(
      CreateStatus("relu", {}, {Floats(Shape({2})), Floats(Shape({2}))}, {Floats(Shape({2}))}),
      {"expects 1 inputs"});
  ExpectInvalid(CreateStatus("softmax_cross_entropy", {},
                             {Floats(Shape({2, 3})), Floats(Shape({2}))}, {Floats(Shape({2}))}),
                {"input 1 (labels) must be int32, not float32"});
}

TEST_F(BadInputTest, AnUpdateActorWithTooLittleStateIsRefused) {
  KernelHarness harness("adam_update", {FloatAttribute("learning_rate", 0.1)},
                        {Floats(Shape({10})), Floats(Shape({10}))}, {});
  harness.actor().set_state_bytes(40);  // Adam needs 80: m and v.
  ExpectInvalid(harness.Create(registry_), {"state_bytes 40", "80"});
}

// Runs `op_type` with an out-of-range value at `bad_index` of int32 input `ids_input`, checks the
// error message and that no output element was written (outputs start as NaN).
void ExpectBadIndexRefused(const KernelRegistry& registry, const std::string& op_type,
                           const std::vector<proto::Attribute>& attributes,
                           std::vector<HostTensor> inputs, std::vector<HostTensor> outputs,
                           int ids_input, int64_t bad_index, int32_t bad_value,
                           const std::string& tensor, ParallelRunner* runner) {
  inputs[ids_input].ints[bad_index] = bad_value;
  for (HostTensor& output : outputs) {
    for (float& value : output.floats) value = std::nanf("");
  }
  KernelHarness harness(op_type, attributes, std::move(inputs), std::move(outputs));
  ASSERT_TRUE(harness.Create(registry).ok());
  Status status = harness.Run(runner);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << op_type;
  const std::string expected = op_type + ": " + tensor + "[" + std::to_string(bad_index) +
                               "] = " + std::to_string(bad_value) + " is outside [0, ";
  EXPECT_NE(status.message().find(expected), std::string::npos) << status.message();
  for (const float value : harness.output(0).floats) ASSERT_TRUE(std::isnan(value)) << op_type;
}

TEST_F(BadInputTest, OutOfRangeLabelsAndIdsFailTheFiringNamingTensorIndexAndValue) {
  ThreadedTestRunner runner(3, ThreadedTestRunner::Split::kUneven);
  const Shape logits({3000, 10});
  const Shape rows({3000});
  for (int32_t bad : {10, -1, 1 << 30}) {
    ExpectBadIndexRefused(registry_, "softmax_cross_entropy", {}, {Floats(logits), Ints(rows)},
                          {Floats(rows)}, 1, 2999, bad, "labels", &runner);
    ExpectBadIndexRefused(registry_, "softmax_cross_entropy_grad", {},
                          {Floats(rows), Floats(logits), Ints(rows)}, {Floats(logits)}, 2, 17, bad,
                          "labels", &runner);
    ExpectBadIndexRefused(registry_, "accuracy", {}, {Floats(logits), Ints(rows)},
                          {Floats(Shape())}, 1, 0, bad, "labels", &runner);
    ExpectBadIndexRefused(registry_, "embedding", {}, {Floats(Shape({10, 4})), Ints(rows)},
                          {Floats(Shape({3000, 4}))}, 1, 1234, bad, "ids", &runner);
    ExpectBadIndexRefused(registry_, "embedding_grad", {IntAttribute("num_embeddings", 10)},
                          {Floats(Shape({3000, 4})), Ints(rows)}, {Floats(Shape({10, 4}))}, 1, 5,
                          bad, "ids", &runner);
  }
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
