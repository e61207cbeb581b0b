#include "tests/kernels/cpu_reference_comparison.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/random.h"
#include "reference/kernels/reference_kernels.h"
#include "reference/kernels/testing/reference_kernel_runner.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/testing/threaded_test_runner.h"

namespace softwire {
namespace kernel_tests {
namespace {

using runtime::HostTensor;

const runtime::KernelRegistry& CpuRegistry() {
  static const runtime::KernelRegistry* registry = [] {
    auto* registry = new runtime::KernelRegistry();
    runtime::RegisterCpuKernels(registry);
    return registry;
  }();
  return *registry;
}

const reference::ReferenceKernelTable& ReferenceTable() {
  static const reference::ReferenceKernelTable* table =
      new reference::ReferenceKernelTable(reference::MakeReferenceKernels());
  return *table;
}

std::vector<reference::ReferenceTensor> RunReference(const OpCase& op, bool absolute_inputs) {
  std::vector<reference::ReferenceTensor> inputs;
  for (const HostTensor& input : op.inputs) {
    inputs.push_back(ToReference(input));
    if (absolute_inputs && input.dtype != DType::kInt32) {
      for (double& value : inputs.back().values) value = std::abs(value);
    }
  }
  std::vector<reference::ReferenceTensor> typed_outputs;  // Outputs that are not float32.
  for (size_t index = 0; index < op.output_dtypes.size(); ++index) {
    reference::ReferenceTensor output;
    output.dtype = op.output_dtypes[index];
    output.shape = op.output_shapes.at(index);
    output.values.assign(static_cast<size_t>(output.shape.NumElements()), 0.0);
    typed_outputs.push_back(std::move(output));
  }
  StatusOr<std::vector<reference::ReferenceTensor>> outputs =
      reference::RunReferenceKernel(ReferenceTable(), op.op_type, op.attributes, inputs,
                                    op.output_shapes, nullptr, 0, typed_outputs);
  EXPECT_TRUE(outputs.ok()) << op.op_type << " reference: " << outputs.status();
  if (!outputs.ok()) return {};
  return *outputs;
}

}  // namespace

double RowSumError(int64_t n) {
  return static_cast<double>(n / 16 + 20) * kFloatEpsilon;
}

Tolerance SumTolerance(int64_t terms) {
  return Tolerance{2 * kFloatEpsilon, 0, static_cast<double>(terms + 2) * kFloatEpsilon};
}

HostTensor RandomFloats(const Shape& shape, uint64_t seed) {
  std::vector<float> values(shape.NumElements());
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(NormalAt(seed, i));
  return HostTensor::Float(shape, std::move(values));
}

HostTensor RandomInts(const Shape& shape, int64_t bound, uint64_t seed) {
  std::vector<int32_t> values(shape.NumElements());
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<int32_t>(UniformIntAt(seed, i, bound));
  }
  return HostTensor::Int(shape, std::move(values));
}

HostTensor RandomBFloat16s(const Shape& shape, uint64_t seed) {
  return HostTensor::BFloat16s(shape, RandomFloats(shape, seed).floats);
}

reference::ReferenceTensor ToReference(const HostTensor& tensor) {
  reference::ReferenceTensor converted;
  converted.dtype = tensor.dtype;
  converted.shape = tensor.shape;
  if (tensor.dtype == DType::kInt32) {
    converted.values.assign(tensor.ints.begin(), tensor.ints.end());
  } else if (tensor.dtype == DType::kBFloat16) {
    for (BFloat16 value : tensor.bf16s) converted.values.push_back(ToFloat(value));
  } else {
    converted.values.assign(tensor.floats.begin(), tensor.floats.end());
  }
  return converted;
}

std::vector<HostTensor> RunCpu(const OpCase& op, runtime::ParallelRunner* runner) {
  std::vector<HostTensor> outputs;
  for (size_t index = 0; index < op.output_shapes.size(); ++index) {
    const DType dtype = op.output_dtypes.empty() ? DType::kFloat32 : op.output_dtypes.at(index);
    // NaN, so that an element the kernel forgets to write cannot pass.
    HostTensor output = HostTensor::Zeros(dtype, op.output_shapes[index]);
    for (float& value : output.floats) value = std::nanf("");
    for (BFloat16& value : output.bf16s) value = ToBFloat16(std::nanf(""));
    outputs.push_back(std::move(output));
  }
  runtime::KernelHarness harness(op.op_type, op.attributes, op.inputs, outputs);
  Status created = harness.Create(CpuRegistry());
  EXPECT_TRUE(created.ok()) << created;
  if (!created.ok()) return {};
  Status ran = harness.Run(runner);
  EXPECT_TRUE(ran.ok()) << ran;
  std::vector<HostTensor> results;
  for (size_t index = 0; index < op.output_shapes.size(); ++index) {
    results.push_back(harness.output(static_cast<int>(index)));
  }
  return results;
}

void ExpectCpuMatchesReference(const OpCase& op, const Tolerance& tolerance,
                               runtime::ParallelRunner* runner) {
  ExpectCpuMatchesReference(op, std::vector<Tolerance>(op.output_shapes.size(), tolerance), runner);
}

void ExpectCpuMatchesReference(const OpCase& op, const std::vector<Tolerance>& tolerances,
                               runtime::ParallelRunner* runner) {
  ASSERT_EQ(tolerances.size(), op.output_shapes.size());
  std::vector<HostTensor> cpu = RunCpu(op, runner);
  std::vector<reference::ReferenceTensor> expected = RunReference(op, false);
  std::vector<std::vector<double>> magnitudes = op.magnitudes;
  bool needs_magnitude = false;
  for (const Tolerance& tolerance : tolerances) needs_magnitude |= tolerance.per_term > 0;
  if (needs_magnitude && magnitudes.empty()) {
    for (reference::ReferenceTensor& tensor : RunReference(op, true)) {
      magnitudes.push_back(std::move(tensor.values));
    }
  }
  ASSERT_EQ(cpu.size(), op.output_shapes.size());
  ASSERT_EQ(expected.size(), op.output_shapes.size());
  for (size_t output = 0; output < cpu.size(); ++output) {
    const Tolerance& tolerance = tolerances[output];
    int reported = 0;
    for (size_t i = 0; i < expected[output].values.size(); ++i) {
      const double want = expected[output].values[i];
      const double got = cpu[output].dtype == DType::kBFloat16
                             ? static_cast<double>(ToFloat(cpu[output].bf16s[i]))
                             : static_cast<double>(cpu[output].floats[i]);
      double bound = tolerance.absolute + tolerance.relative * std::abs(want);
      if (tolerance.per_term > 0) bound += tolerance.per_term * magnitudes[output][i];
      if (std::abs(got - want) <= bound) continue;
      ADD_FAILURE() << op.op_type << " output " << output << " [" << i << "] of "
                    << op.output_shapes[output].ToString() << ": cpu " << got << ", reference "
                    << want << ", error " << std::abs(got - want) << " > bound " << bound;
      if (++reported == 5) break;  // Enough to diagnose; do not flood the log.
    }
  }
}

int64_t ExpectCpuMatchesReferenceOnEveryRunner(const OpCase& op, const Tolerance& tolerance) {
  return ExpectCpuMatchesReferenceOnEveryRunner(
      op, std::vector<Tolerance>(op.output_shapes.size(), tolerance));
}

int64_t ExpectCpuMatchesReferenceOnEveryRunner(const OpCase& op,
                                               const std::vector<Tolerance>& tolerance) {
  runtime::SerialRunner serial;
  runtime::ThreadedTestRunner uneven(3, runtime::ThreadedTestRunner::Split::kUneven);
  runtime::ThreadedTestRunner even(2, runtime::ThreadedTestRunner::Split::kEven);
  {
    SCOPED_TRACE("serial runner");
    ExpectCpuMatchesReference(op, tolerance, &serial);
  }
  {
    SCOPED_TRACE("3 threads, uneven ranges");
    ExpectCpuMatchesReference(op, tolerance, &uneven);
  }
  {
    SCOPED_TRACE("2 threads, even ranges");
    ExpectCpuMatchesReference(op, tolerance, &even);
  }
  return uneven.parallel_calls();
}

}  // namespace kernel_tests
}  // namespace softwire
