// The transfer and boxing kernels (copy, slice, assemble, flat_split, flat_concat) and the
// physical attributes of split tensors (reduce_mean and accuracy `divisor`, embedding and
// embedding_grad `index_begin` and `partial`) against the reference, and against what they
// are for: the parts a split computes add up to the whole.
//
// Tolerances: copy, slice, flat_split and flat_concat move values and must be exact (a float32
// copy of a float32 value). assemble adds its inputs in order starting from 0: exact when the
// blocks tile the output, one rounding per added input otherwise (kRounding for two partial
// values; a few more for more). divisor changes only the final division: kRounding on top of the
// op's own tolerance.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/kernels/testing/reference_kernel_runner.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/testing/kernel_harness.h"
#include "runtime/kernels/testing/threaded_test_runner.h"
#include "tests/kernels/cpu_reference_comparison.h"

namespace softwire {
namespace kernel_tests {
namespace {

using runtime::HostTensor;

constexpr Tolerance kExact = {0, 0, 0};

const runtime::KernelRegistry& Registry() {
  static const runtime::KernelRegistry* registry = [] {
    auto* made = new runtime::KernelRegistry;
    runtime::RegisterCpuKernels(made);
    return made;
  }();
  return *registry;
}

// Runs an int32 op on the cpu kernel (3 uneven threads) and on the reference, and expects
// identical outputs.
void ExpectIntOpMatchesReference(const std::string& op_type,
                                 const std::vector<proto::Attribute>& attributes,
                                 const std::vector<HostTensor>& inputs,
                                 const std::vector<Shape>& output_shapes) {
  std::vector<HostTensor> outputs;
  std::vector<reference::ReferenceTensor> reference_outputs;
  for (const Shape& shape : output_shapes) {
    HostTensor output = HostTensor::Zeros(DType::kInt32, shape);
    for (int32_t& value : output.ints) value = -7;  // Unwritten elements cannot pass.
    outputs.push_back(std::move(output));
    reference_outputs.push_back(
        reference::IntTensor(shape, std::vector<double>(shape.NumElements(), 0.0)));
  }
  runtime::KernelHarness harness(op_type, attributes, inputs, outputs);
  ASSERT_TRUE(harness.Create(Registry()).ok());
  runtime::ThreadedTestRunner uneven(3, runtime::ThreadedTestRunner::Split::kUneven);
  ASSERT_TRUE(harness.Run(&uneven).ok());
  std::vector<reference::ReferenceTensor> reference_inputs;
  for (const HostTensor& input : inputs) reference_inputs.push_back(ToReference(input));
  const reference::ReferenceKernelTable table = reference::MakeReferenceKernels();
  StatusOr<std::vector<reference::ReferenceTensor>> expected = reference::RunReferenceKernel(
      table, op_type, attributes, reference_inputs, output_shapes, nullptr, 0, reference_outputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (size_t k = 0; k < output_shapes.size(); ++k) {
    for (size_t i = 0; i < harness.output(static_cast<int>(k)).ints.size(); ++i) {
      ASSERT_EQ(harness.output(static_cast<int>(k)).ints[i], (*expected)[k].values[i])
          << op_type << " output " << k << " [" << i << "]";
    }
  }
}

TEST(TransferKernels, CopyIsExactForFloatsAndInts) {
  ExpectCpuMatchesReferenceOnEveryRunner(
      {"copy", {}, {RandomFloats(Shape({300, 257}), 1)}, {Shape({300, 257})}}, kExact);
  ExpectCpuMatchesReferenceOnEveryRunner({"copy", {}, {RandomFloats(Shape(), 2)}, {Shape()}},
                                         kExact);
  ExpectIntOpMatchesReference("copy", {}, {RandomInts(Shape({64, 16}), 100, 3)}, {Shape({64, 16})});
}

TEST(TransferKernels, SliceTakesEveryKindOfBlock) {
  struct Case {
    Shape x;
    std::vector<int64_t> begin;
    std::vector<int64_t> end;
  };
  const std::vector<Case> cases = {
      {Shape({8, 6}), {4, 0}, {8, 6}},                    // Rows: one contiguous run.
      {Shape({8, 6}), {0, 3}, {8, 6}},                    // Columns: a run per row.
      {Shape({4, 6, 5}), {1, 2, 0}, {3, 5, 5}},           // Middle block.
      {Shape({4, 6, 5}), {0, 0, 1}, {4, 6, 4}},           // Innermost axis.
      {Shape({9}), {2}, {7}},                             // Rank 1.
      {Shape({3, 4}), {0, 0}, {3, 4}},                    // Everything.
      {Shape({2, 3, 4, 5}), {1, 1, 2, 0}, {2, 3, 4, 5}},  // Rank 4.
      {Shape({600, 256}), {0, 128}, {600, 256}},          // Many runs, in parallel.
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.x.ToString() + " " + Shape(c.begin).ToString() + " " + Shape(c.end).ToString());
    std::vector<int64_t> dims;
    for (size_t axis = 0; axis < c.begin.size(); ++axis)
      dims.push_back(c.end[axis] - c.begin[axis]);
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"slice",
         {IntsAttribute("begin", c.begin), IntsAttribute("end", c.end)},
         {RandomFloats(c.x, 4)},
         {Shape(dims)}},
        kExact);
  }
  ExpectIntOpMatchesReference("slice",
                              {IntsAttribute("begin", {2, 1}), IntsAttribute("end", {6, 3})},
                              {RandomInts(Shape({8, 4}), 50, 5)}, {Shape({4, 2})});
}

TEST(TransferKernels, ASliceOfManyRowsTakesTheParallelPath) {
  OpCase op{"slice",
            {IntsAttribute("begin", {0, 100}), IntsAttribute("end", {2000, 300})},
            {RandomFloats(Shape({2000, 300}), 6)},
            {Shape({2000, 200})}};
  EXPECT_GT(ExpectCpuMatchesReferenceOnEveryRunner(op, kExact), 0);
}

TEST(TransferKernels, AssembleConcatenatesTilesExactly) {
  // Two column halves of [6, 8] given in reverse order, and three row blocks of [7, 3].
  ExpectCpuMatchesReferenceOnEveryRunner(
      {"assemble",
       {IntsAttribute("shape", {6, 8}), IntsAttribute("offsets", {0, 4, 0, 0})},
       {RandomFloats(Shape({6, 4}), 7), RandomFloats(Shape({6, 4}), 8)},
       {Shape({6, 8})}},
      kExact);
  ExpectCpuMatchesReferenceOnEveryRunner(
      {"assemble",
       {IntsAttribute("shape", {7, 3}), IntsAttribute("offsets", {0, 0, 2, 0, 5, 0})},
       {RandomFloats(Shape({2, 3}), 9), RandomFloats(Shape({3, 3}), 10),
        RandomFloats(Shape({2, 3}), 11)},
       {Shape({7, 3})}},
      kExact);
  ExpectIntOpMatchesReference(
      "assemble", {IntsAttribute("shape", {4}), IntsAttribute("offsets", {0, 2})},
      {RandomInts(Shape({2}), 9, 12), RandomInts(Shape({2}), 9, 13)}, {Shape({4})});
}

TEST(TransferKernels, AssembleAddsEqualFullBlocksAsPartialValues) {
  // Two partial values of [300, 257], and a partial pair beside a tile ([4, 6]: the left half
  // is the sum of two, the right half one block); the output holds no element the inputs miss.
  ExpectCpuMatchesReferenceOnEveryRunner(
      {"assemble",
       {IntsAttribute("shape", {300, 257}), IntsAttribute("offsets", {0, 0, 0, 0})},
       {RandomFloats(Shape({300, 257}), 14), RandomFloats(Shape({300, 257}), 15)},
       {Shape({300, 257})}},
      kRounding);
  ExpectCpuMatchesReferenceOnEveryRunner(
      {"assemble",
       {IntsAttribute("shape", {4, 6}), IntsAttribute("offsets", {0, 0, 0, 0, 0, 3})},
       {RandomFloats(Shape({4, 3}), 16), RandomFloats(Shape({4, 3}), 17),
        RandomFloats(Shape({4, 3}), 18)},
       {Shape({4, 6})}},
      kRounding);
}

TEST(TransferKernels, AssembleLeavesZerosWhereNoBlockLies) {
  runtime::SerialRunner serial;
  std::vector<HostTensor> y =
      RunCpu({"assemble",
              {IntsAttribute("shape", {2, 3}), IntsAttribute("offsets", {1, 1})},
              {HostTensor::Float(Shape({1, 2}), {5, 6})},
              {Shape({2, 3})}},
             &serial);
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].floats, (std::vector<float>{0, 0, 0, 0, 5, 6}));
}

TEST(TransferKernels, FlatSplitAndFlatConcatAreInverse) {
  const HostTensor x = RandomFloats(Shape({5, 7}), 19);
  const std::vector<int64_t> sizes = {10, 0, 20, 5};
  OpCase split{"flat_split",
               {IntsAttribute("sizes", sizes)},
               {x},
               {Shape({10}), Shape({0}), Shape({20}), Shape({5})}};
  ExpectCpuMatchesReferenceOnEveryRunner(split, kExact);
  runtime::SerialRunner serial;
  std::vector<HostTensor> chunks = RunCpu(split, &serial);
  OpCase concat{"flat_concat", {IntsAttribute("shape", {5, 7})}, chunks, {Shape({5, 7})}};
  ExpectCpuMatchesReferenceOnEveryRunner(concat, kExact);
  EXPECT_EQ(RunCpu(concat, &serial)[0].floats, x.floats);
  // Large chunks go through the parallel path.
  OpCase big{"flat_split",
             {IntsAttribute("sizes", {100000, 60000})},
             {RandomFloats(Shape({160000}), 20)},
             {Shape({100000}), Shape({60000})}};
  EXPECT_GT(ExpectCpuMatchesReferenceOnEveryRunner(big, kExact), 0);
}

TEST(TransferKernels, BadAttributesAreErrorsNamingTheOp) {
  auto create = [](const std::string& op, std::vector<proto::Attribute> attributes,
                   std::vector<HostTensor> inputs, std::vector<HostTensor> outputs) {
    runtime::KernelHarness harness(op, attributes, std::move(inputs), std::move(outputs));
    return harness.Create(Registry());
  };
  const HostTensor x = HostTensor::Zeros(DType::kFloat32, Shape({4, 4}));
  Status empty = create("slice", {IntsAttribute("begin", {2, 0}), IntsAttribute("end", {2, 4})},
                        {x}, {HostTensor::Zeros(DType::kFloat32, Shape({0, 4}))});
  EXPECT_NE(empty.message().find("slice: axis 0: [2, 2)"), std::string::npos) << empty;
  Status outside =
      create("assemble", {IntsAttribute("shape", {4, 4}), IntsAttribute("offsets", {3, 0})}, {x},
             {HostTensor::Zeros(DType::kFloat32, Shape({4, 4}))});
  EXPECT_NE(outside.message().find("does not fit"), std::string::npos) << outside;
  Status sizes = create("flat_split", {IntsAttribute("sizes", {10, 5})}, {x},
                        {HostTensor::Zeros(DType::kFloat32, Shape({10})),
                         HostTensor::Zeros(DType::kFloat32, Shape({5}))});
  EXPECT_NE(sizes.message().find("chunks hold 15 elements"), std::string::npos) << sizes;
  Status mixed = create("copy", {}, {x}, {HostTensor::Zeros(DType::kInt32, Shape({4, 4}))});
  EXPECT_FALSE(mixed.ok());
}

TEST(PhysicalAttributes, ReduceMeanWithADivisorIsAPartialSumOfTheLogicalMean) {
  const HostTensor x = RandomFloats(Shape({6, 10}), 21);
  ExpectCpuMatchesReferenceOnEveryRunner(
      {"reduce_mean", {IntAttribute("divisor", 24)}, {x}, {Shape()}}, SumTolerance(60));
  // Two halves of the rows, each divided by the logical count, add up to the whole's mean.
  runtime::SerialRunner serial;
  auto half = [&](int64_t first) {
    std::vector<float> values(x.floats.begin() + first * 10, x.floats.begin() + (first + 3) * 10);
    return RunCpu({"reduce_mean",
                   {IntAttribute("divisor", 60)},
                   {HostTensor::Float(Shape({3, 10}), values)},
                   {Shape()}},
                  &serial)[0]
        .floats[0];
  };
  const float whole = RunCpu({"reduce_mean", {}, {x}, {Shape()}}, &serial)[0].floats[0];
  EXPECT_NEAR(half(0) + half(3), whole, 1e-6);
}

TEST(PhysicalAttributes, AccuracyWithADivisorCountsAgainstTheLogicalRows) {
  const HostTensor logits = RandomFloats(Shape({40, 5}), 22);
  const HostTensor labels = RandomInts(Shape({40}), 5, 23);
  ExpectCpuMatchesReferenceOnEveryRunner(
      {"accuracy", {IntAttribute("divisor", 160)}, {logits, labels}, {Shape()}}, kRounding);
  runtime::SerialRunner serial;
  const float part =
      RunCpu({"accuracy", {IntAttribute("divisor", 160)}, {logits, labels}, {Shape()}}, &serial)[0]
          .floats[0];
  const float whole = RunCpu({"accuracy", {}, {logits, labels}, {Shape()}}, &serial)[0].floats[0];
  EXPECT_FLOAT_EQ(part * 4, whole);
}

// The table [V = 12, C = 5] split into rows [0, 7) and [7, 12).
struct SplitTable {
  HostTensor whole = RandomFloats(Shape({12, 5}), 24);
  HostTensor ids = RandomInts(Shape({3, 8}), 12, 25);
  HostTensor Rows(int64_t begin, int64_t end) const {
    return HostTensor::Float(
        Shape({end - begin, 5}),
        std::vector<float>(whole.floats.begin() + begin * 5, whole.floats.begin() + end * 5));
  }
};

TEST(PhysicalAttributes, PartialEmbeddingsOfTheRowPartsAddUpToTheWholeLookup) {
  const SplitTable table;
  runtime::SerialRunner serial;
  std::vector<float> sum(3 * 8 * 5, 0.0f);
  for (const auto& [begin, end] : {std::pair<int64_t, int64_t>{0, 7}, {7, 12}}) {
    OpCase part{"embedding",
                {IntAttribute("index_begin", begin), BoolAttribute("partial", true)},
                {table.Rows(begin, end), table.ids},
                {Shape({3, 8, 5})}};
    ExpectCpuMatchesReferenceOnEveryRunner(part, kExact);
    std::vector<HostTensor> y = RunCpu(part, &serial);
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += y[0].floats[i];
  }
  const std::vector<HostTensor> whole =
      RunCpu({"embedding", {}, {table.whole, table.ids}, {Shape({3, 8, 5})}}, &serial);
  EXPECT_EQ(sum, whole[0].floats);
}

TEST(PhysicalAttributes, PartialEmbeddingGradsAreTheRowsOfTheWholeGradient) {
  const SplitTable table;
  const HostTensor dy = RandomFloats(Shape({3, 8, 5}), 26);
  runtime::SerialRunner serial;
  const std::vector<HostTensor> whole = RunCpu(
      {"embedding_grad", {IntAttribute("num_embeddings", 12)}, {dy, table.ids}, {Shape({12, 5})}},
      &serial);
  for (const auto& [begin, end] : {std::pair<int64_t, int64_t>{0, 7}, {7, 12}}) {
    OpCase part{"embedding_grad",
                {IntAttribute("num_embeddings", end - begin), IntAttribute("index_begin", begin),
                 BoolAttribute("partial", true)},
                {dy, table.ids},
                {Shape({end - begin, 5})}};
    ExpectCpuMatchesReferenceOnEveryRunner(part, SumTolerance(24));
    const std::vector<HostTensor> y = RunCpu(part, &serial);
    for (int64_t i = 0; i < (end - begin) * 5; ++i) {
      EXPECT_EQ(y[0].floats[i], whole[0].floats[begin * 5 + i]) << "row part " << begin;
    }
  }
}

TEST(PhysicalAttributes, AnIdOutsideAWholePartIsAnErrorNamingItsRange) {
  const SplitTable table;
  runtime::KernelHarness harness("embedding", {IntAttribute("index_begin", 7)},
                                 {table.Rows(7, 12), HostTensor::Int(Shape({2}), {8, 3})},
                                 {HostTensor::Zeros(DType::kFloat32, Shape({2, 5}))});
  ASSERT_TRUE(harness.Create(Registry()).ok());
  runtime::SerialRunner serial;
  Status ran = harness.Run(&serial);
  EXPECT_NE(ran.message().find("embedding: ids[1] = 3 is outside [7, 12)"), std::string::npos)
      << ran;
  // A partial part accepts any id but a negative one.
  runtime::KernelHarness negative(
      "embedding_grad",
      {IntAttribute("num_embeddings", 5), IntAttribute("index_begin", 7),
       BoolAttribute("partial", true)},
      {HostTensor::Zeros(DType::kFloat32, Shape({2, 5})), HostTensor::Int(Shape({2}), {3, -1})},
      {HostTensor::Zeros(DType::kFloat32, Shape({5, 5}))});
  ASSERT_TRUE(negative.Create(Registry()).ok());
  EXPECT_FALSE(negative.Run(&serial).ok());
}

}  // namespace
}  // namespace kernel_tests
}  // namespace softwire
