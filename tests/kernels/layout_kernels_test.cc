// The kernels that read layouts (docs/LAYOUTS.md) give in NHWC and nChw16c what they give in
// NCHW: each runs once on plain tensors and once on the same values laid out (permuted here by
// base/layout.h's offsets, independently of the reorder kernel), and the laid-out outputs,
// permuted back, must equal the plain ones. Exactly for reorder, the element-wise ops and the
// pools (the same values, sums in the same order); within a few float32 roundings for batch_norm
// (its double sums run in another order: the relative error of a double sum of 10^3 terms is far
// below float32's 6e-8) and for the convolutions (oneDNN's kernels for other layouts add in
// other orders: SumTolerance of their K terms, as convolution_matches_reference_test.cc
// argues). Kernels that do not read layouts refuse laid-out tensors.
#include <gtest/gtest.h>

#include <cmath>

#include "base/layout.h"
#include "proto/tensor_desc.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/testing/kernel_harness.h"
#include "runtime/kernels/testing/threaded_test_runner.h"
#include "tests/kernels/cpu_reference_comparison.h"

namespace softwire {
namespace kernel_tests {
namespace {

using runtime::HostTensor;
using runtime::KernelHarness;

// `plain` (NCHW) laid out in `layout`; Unpermute is the inverse.
std::vector<float> Permute(const std::vector<float>& plain, const Shape& shape, Layout layout) {
  const ImageLayout to = ImageLayout::Of(layout, shape);
  const ImageLayout from = ImageLayout::Of(Layout::kPlain, shape);
  std::vector<float> out(plain.size());
  for (int64_t n = 0; n < to.batch; ++n) {
    for (int64_t c = 0; c < to.channels; ++c) {
      for (int64_t s = 0; s < to.spatial; ++s)
        out[to.Offset(n, c, s)] = plain[from.Offset(n, c, s)];
    }
  }
  return out;
}

std::vector<float> Unpermute(const std::vector<float>& laid, const Shape& shape, Layout layout) {
  const ImageLayout from = ImageLayout::Of(layout, shape);
  const ImageLayout to = ImageLayout::Of(Layout::kPlain, shape);
  std::vector<float> out(laid.size());
  for (int64_t n = 0; n < to.batch; ++n) {
    for (int64_t c = 0; c < to.channels; ++c) {
      for (int64_t s = 0; s < to.spatial; ++s) out[to.Offset(n, c, s)] = laid[from.Offset(n, c, s)];
    }
  }
  return out;
}

struct Run {
  std::vector<std::vector<float>> outputs;  // Plain order.
};

// Runs `op` with the inputs and outputs marked in `images` held in `layout` (the caller's values
// are plain; they are permuted in and the outputs permuted back).
Run RunOp(const std::string& op, const std::vector<proto::Attribute>& attributes,
          std::vector<HostTensor> inputs, std::vector<Shape> output_shapes,
          const std::vector<bool>& image_inputs, const std::vector<bool>& image_outputs,
          Layout layout, runtime::ParallelRunner* runner) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (image_inputs[i]) inputs[i].floats = Permute(inputs[i].floats, inputs[i].shape, layout);
  }
  std::vector<HostTensor> outputs;
  for (const Shape& shape : output_shapes)
    outputs.push_back(HostTensor::Zeros(DType::kFloat32, shape));
  KernelHarness harness(op, attributes, inputs, outputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (image_inputs[i])
      harness.actor().mutable_kernel()->mutable_input(i)->set_layout(ProtoLayoutOf(layout));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (image_outputs[i]) {
      harness.actor().mutable_kernel()->mutable_output(i)->set_layout(ProtoLayoutOf(layout));
    }
  }
  runtime::KernelRegistry registry;
  runtime::RegisterCpuKernels(&registry);
  Status created = harness.Create(registry);
  EXPECT_TRUE(created.ok()) << op << " in " << LayoutName(layout) << ": " << created;
  Run run;
  if (!created.ok()) return run;
  Status ran = harness.Run(runner);
  EXPECT_TRUE(ran.ok()) << ran;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::vector<float> values = harness.output(static_cast<int>(i)).floats;
    if (image_outputs[i]) values = Unpermute(values, output_shapes[i], layout);
    run.outputs.push_back(values);
  }
  return run;
}

// The op in NCHW and in each other layout: the same outputs within `relative` (against the
// output's largest magnitude; 0: exactly).
void ExpectSameInEveryLayout(const std::string& op, const std::vector<proto::Attribute>& attributes,
                             const std::vector<HostTensor>& inputs,
                             const std::vector<Shape>& output_shapes,
                             const std::vector<bool>& image_inputs,
                             const std::vector<bool>& image_outputs, double relative) {
  runtime::SerialRunner serial;
  runtime::ThreadedTestRunner uneven(3, runtime::ThreadedTestRunner::Split::kUneven);
  for (runtime::ParallelRunner* runner : std::vector<runtime::ParallelRunner*>{&serial, &uneven}) {
    const Run plain = RunOp(op, attributes, inputs, output_shapes, image_inputs, image_outputs,
                            Layout::kPlain, runner);
    for (Layout layout : {Layout::kNhwc, Layout::kNChw16c}) {
      const Run laid =
          RunOp(op, attributes, inputs, output_shapes, image_inputs, image_outputs, layout, runner);
      ASSERT_EQ(laid.outputs.size(), plain.outputs.size()) << op << " " << LayoutName(layout);
      for (size_t o = 0; o < plain.outputs.size(); ++o) {
        double scale = 0;
        for (float v : plain.outputs[o]) scale = std::max(scale, std::fabs(static_cast<double>(v)));
        for (size_t e = 0; e < plain.outputs[o].size(); ++e) {
          ASSERT_LE(std::fabs(laid.outputs[o][e] - plain.outputs[o][e]), relative * scale)
              << op << " in " << LayoutName(layout) << ", output " << o << " element " << e << ": "
              << laid.outputs[o][e] << " against " << plain.outputs[o][e];
        }
      }
    }
  }
}

const Shape kImages({3, 32, 5, 4});  // 16 divides the channels: both layouts fit.

TEST(LayoutKernels, ReorderPermutesExactlyAndBack) {
  runtime::SerialRunner runner;
  const HostTensor x = RandomFloats(kImages, 1);
  for (Layout to : {Layout::kNhwc, Layout::kNChw16c}) {
    KernelHarness there("reorder", {StringAttribute("layout", LayoutName(to))}, {x},
                        {HostTensor::Zeros(DType::kFloat32, kImages)});
    there.actor().mutable_kernel()->mutable_output(0)->set_layout(ProtoLayoutOf(to));
    runtime::KernelRegistry registry;
    runtime::RegisterCpuKernels(&registry);
    ASSERT_TRUE(there.Create(registry).ok());
    ASSERT_TRUE(there.Run(&runner).ok());
    EXPECT_EQ(there.output(0).floats, Permute(x.floats, kImages, to)) << LayoutName(to);
    // And between the two laid-out layouts.
    const Layout other = to == Layout::kNhwc ? Layout::kNChw16c : Layout::kNhwc;
    HostTensor laid = x;
    laid.floats = there.output(0).floats;
    KernelHarness across("reorder", {StringAttribute("layout", LayoutName(other))}, {laid},
                         {HostTensor::Zeros(DType::kFloat32, kImages)});
    across.actor().mutable_kernel()->mutable_input(0)->set_layout(ProtoLayoutOf(to));
    across.actor().mutable_kernel()->mutable_output(0)->set_layout(ProtoLayoutOf(other));
    ASSERT_TRUE(across.Create(registry).ok());
    ASSERT_TRUE(across.Run(&runner).ok());
    EXPECT_EQ(across.output(0).floats, Permute(x.floats, kImages, other)) << LayoutName(other);
  }
}

TEST(LayoutKernels, ElementWiseOpsAndPoolsGiveTheSameValues) {
  const HostTensor x = RandomFloats(kImages, 2);
  const HostTensor dy = RandomFloats(kImages, 3);
  ExpectSameInEveryLayout("relu", {}, {x}, {kImages}, {true}, {true}, 0);
  ExpectSameInEveryLayout("relu_grad", {}, {dy, x}, {kImages}, {true, true}, {true}, 0);
  ExpectSameInEveryLayout("add", {}, {x, dy}, {kImages}, {true, true}, {true}, 0);
  const std::vector<proto::Attribute> window = {IntsAttribute("kernel", {2, 2}),
                                                IntsAttribute("padding", {1, 0})};
  const Shape windowed({3, 32, 3, 2});
  ExpectSameInEveryLayout("max_pool2d", window, {x}, {windowed}, {true}, {true}, 0);
  ExpectSameInEveryLayout("avg_pool2d", window, {x}, {windowed}, {true}, {true}, 0);
  ExpectSameInEveryLayout("max_pool2d_grad", window, {RandomFloats(windowed, 20), x}, {kImages},
                          {true, true}, {true}, 0);
  std::vector<proto::Attribute> avg_grad = window;
  avg_grad.push_back(IntsAttribute("shape", kImages.dims()));
  ExpectSameInEveryLayout("avg_pool2d_grad", avg_grad, {RandomFloats(windowed, 21)}, {kImages},
                          {true}, {true}, 0);
  const Shape pooled({kImages.dim(0), kImages.dim(1)});
  ExpectSameInEveryLayout("global_avg_pool", {}, {x}, {pooled}, {true}, {false}, 0);
  ExpectSameInEveryLayout("global_avg_pool_grad", {IntsAttribute("shape", kImages.dims())},
                          {RandomFloats(pooled, 4)}, {kImages}, {false}, {true}, 0);
}

TEST(LayoutKernels, BatchNormFamilyGivesTheSameValues) {
  const HostTensor x = RandomFloats(kImages, 5);
  const HostTensor dy = RandomFloats(kImages, 6);
  const Shape channels({kImages.dim(1)});
  const HostTensor gamma = RandomFloats(channels, 7), beta = RandomFloats(channels, 8);
  HostTensor running_var = RandomFloats(channels, 9);
  for (float& v : running_var.floats) v = std::fabs(v) + 0.5f;
  const double tolerance = 64 * kFloatEpsilon;
  ExpectSameInEveryLayout("batch_norm", {}, {x, gamma, beta}, {kImages}, {true, false, false},
                          {true}, tolerance);
  ExpectSameInEveryLayout("batch_norm", {BoolAttribute("use_running_statistics", true)},
                          {x, gamma, beta, RandomFloats(channels, 10), running_var}, {kImages},
                          {true, false, false, false, false}, {true}, tolerance);
  ExpectSameInEveryLayout("batch_norm_grad", {}, {dy, x, gamma}, {kImages, channels, channels},
                          {true, true, false}, {true, false, false}, tolerance);
  ExpectSameInEveryLayout("batch_norm_statistics", {}, {x}, {channels, channels}, {true},
                          {false, false}, tolerance);
}

TEST(LayoutKernels, ConvolutionsGiveTheSameValues) {
  const Shape x({4, 16, 7, 6}), w({32, 16, 3, 3}), y({4, 32, 4, 3});  // Stride 2, padding 1.
  const std::vector<proto::Attribute> attributes = {IntsAttribute("strides", {2, 2}),
                                                    IntsAttribute("padding", {1, 1})};
  const double tolerance = SumTolerance(16 * 9 * 4).relative + 1e-6;
  ExpectSameInEveryLayout("conv2d", attributes, {RandomFloats(x, 11), RandomFloats(w, 12)}, {y},
                          {true, false}, {true}, tolerance);
  std::vector<proto::Attribute> input = attributes;
  input.push_back(IntsAttribute("shape", x.dims()));
  ExpectSameInEveryLayout("conv2d_grad_input", input, {RandomFloats(y, 13), RandomFloats(w, 14)},
                          {x}, {true, false}, {true}, tolerance);
  std::vector<proto::Attribute> filter = attributes;
  filter.push_back(IntsAttribute("shape", w.dims()));
  ExpectSameInEveryLayout("conv2d_grad_filter", filter, {RandomFloats(y, 15), RandomFloats(x, 16)},
                          {w}, {true, true}, {false}, tolerance);
}

TEST(LayoutKernels, KernelsWithoutLayoutsRefuseLaidOutTensors) {
  runtime::KernelRegistry registry;
  runtime::RegisterCpuKernels(&registry);
  const HostTensor x = RandomFloats(kImages, 17);
  KernelHarness softmax("softmax", {}, {x}, {HostTensor::Zeros(DType::kFloat32, kImages)});
  softmax.actor().mutable_kernel()->mutable_input(0)->set_layout(proto::LAYOUT_NHWC);
  softmax.actor().mutable_kernel()->mutable_output(0)->set_layout(proto::LAYOUT_NHWC);
  Status refused = softmax.Create(registry);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("no kernel for tensors in a layout other than plain"),
            std::string::npos)
      << refused;
  KernelHarness mixed("add", {}, {x, x}, {HostTensor::Zeros(DType::kFloat32, kImages)});
  mixed.actor().mutable_kernel()->mutable_input(0)->set_layout(proto::LAYOUT_NHWC);
  mixed.actor().mutable_kernel()->mutable_output(0)->set_layout(proto::LAYOUT_NHWC);
  refused = mixed.Create(registry);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("same dims and layout"), std::string::npos) << refused;
}

}  // namespace
}  // namespace kernel_tests
}  // namespace softwire
