// The cuda device: what holds on machines without a GPU (device names, the error a user without
// a driver sees) and, on a GPU, its memory, copies and queues. GPU tests skip without one,
// saying why ("no CUDA device: ...").
#include "runtime/device/cuda/cuda_device.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>

#include "runtime/device/cuda/cuda_test_device.h"
#include "runtime/device/device_factory.h"
#include "runtime/kernels/cuda/cuda_kernels.h"

namespace softwire {
namespace runtime {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

#define SKIP_WITHOUT_CUDA_DEVICE()             \
  do {                                         \
    const std::string why = WhyNoCudaDevice(); \
    if (!why.empty()) GTEST_SKIP() << why;     \
  } while (false)

TEST(CudaOrdinalTest, IsTheNumberAfterCudaInTheDevicesName) {
  proto::PlanDevice device = CudaPlanDevice();
  device.set_name("cuda:3");
  StatusOr<int> ordinal = CudaOrdinal(device);
  ASSERT_TRUE(ordinal.ok());
  EXPECT_EQ(*ordinal, 3);
  device.set_name("gpu0");
  EXPECT_THAT(CudaOrdinal(device).status().message(), HasSubstr("'node0/gpu0'"));
  device.set_name("cuda:x");
  EXPECT_FALSE(CudaOrdinal(device).ok());
}

TEST(CudaDeviceTest, WithoutADriverOrGpuCreatingOneFailsNamingTheDeviceAndTheCudaError) {
  if (WhyNoCudaDevice().empty())
    GTEST_SKIP() << "a CUDA device is present: this is the no-GPU case";
  DeviceSpec spec;
  spec.device = CudaPlanDevice();
  DeviceEnvironment environment;
  StatusOr<std::unique_ptr<Device>> device = CreateDevice(spec, environment);
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(device.status().message(), HasSubstr("device 'node0/cuda:0' cannot be created"));
  EXPECT_THAT(device.status().message(),
              AnyOf(HasSubstr("no CUDA driver: cuda"), HasSubstr("no CUDA device: cuda")));
  std::cout << "what a user without a GPU sees: " << device.status().ToString() << "\n";
}

TEST(CudaDeviceTest, AnArenaIsOneZeroFilledAllocationOfExactlyThePlannedBytes) {
  SKIP_WITHOUT_CUDA_DEVICE();
  auto device = CudaDevice::Create(CudaPlanDevice(), 1, DeviceOptions(), nullptr);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  const int64_t bytes = (int64_t{1} << 20) + 12;
  auto arena = (*device)->AllocateArena(bytes);
  ASSERT_TRUE(arena.ok()) << arena.status().ToString();
  EXPECT_EQ((*arena)->allocated_bytes(), bytes);
  std::vector<char> host(static_cast<size_t>(bytes), 'x');
  ASSERT_TRUE((*device)->CopyToHost((*arena)->base(), host.data(), bytes).ok());
  EXPECT_EQ(std::count(host.begin(), host.end(), 0), bytes);
  std::vector<char> pattern(static_cast<size_t>(bytes));
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<char>(i * 7 + 1);
  ASSERT_TRUE((*device)->CopyFromHost(pattern.data(), (*arena)->base(), bytes).ok());
  ASSERT_TRUE((*device)->CopyToHost((*arena)->base(), host.data(), bytes).ok());
  EXPECT_EQ(host, pattern);
}

TEST(CudaDeviceTest, AnArenaLargerThanTheGpusFreeMemoryIsResourceExhaustedNamingTheDevice) {
  SKIP_WITHOUT_CUDA_DEVICE();
  auto device = CudaDevice::Create(CudaPlanDevice(), 1, DeviceOptions(), nullptr);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  auto arena = (*device)->AllocateArena(int64_t{1} << 50);
  EXPECT_EQ(arena.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(arena.status().message(), HasSubstr("'node0/cuda:0'"));
}

TEST(CudaDeviceTest, ManyFiringsInFlightOnOneQueueRunInLaunchOrderWithoutAHostWait) {
  SKIP_WITHOUT_CUDA_DEVICE();
  KernelRegistry kernels;
  RegisterCudaKernels(&kernels);
  auto device = CudaDevice::Create(CudaPlanDevice(), 2, DeviceOptions(), &kernels);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  // accumulate: firing 0 copies x, later firings add it; 64 in flight without a host wait.
  constexpr int kFirings = 64;
  const int64_t n = 1 << 16;
  KernelHarness harness("accumulate", {}, {HostTensor::Float({n}, std::vector<float>(n, 1.0f))},
                        {HostTensor::Zeros(DType::kFloat32, {n})});
  ASSERT_TRUE(RunOnCuda(device->get(), kernels, &harness, kFirings).ok());
  for (float value : harness.output(0).floats) ASSERT_EQ(value, static_cast<float>(kFirings));
}

TEST(CudaDeviceTest, ALaunchOfAStoppingJobIsCancelledAndAHostKernelIsRefusedNamingTheDevice) {
  SKIP_WITHOUT_CUDA_DEVICE();
  auto device = CudaDevice::Create(CudaPlanDevice(), 1, DeviceOptions(), nullptr);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  StatusOr<DeviceQueue*> queue = (*device)->queue(0);
  ASSERT_TRUE(queue.ok());
  class HostKernel final : public Kernel {
   public:
    Status Run(const KernelContext&) override { return Status::Ok(); }
  } host_kernel;
  KernelContext context = (*device)->NewKernelContext(/*queue=*/0);
  WaitingListener listener;
  std::atomic<bool> stopping{true};
  LaunchRequest request;
  request.actor = 5;
  request.kernel = &host_kernel;
  request.context = &context;
  request.listener = &listener;
  request.stopping = &stopping;
  Status unused;
  EXPECT_EQ((*queue)->Launch(request, &unused), DeviceQueue::Outcome::kDeferred);
  stopping = false;
  request.firing = 1;
  EXPECT_EQ((*queue)->Launch(request, &unused), DeviceQueue::Outcome::kDeferred);
  ASSERT_TRUE(listener.Wait(2));
  std::vector<WaitingListener::Completion> done = listener.completions();
  EXPECT_EQ(done[0].status.code(), StatusCode::kCancelled);
  EXPECT_EQ(done[1].status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(done[1].status.message(), HasSubstr("'node0/cuda:0'"));
}

TEST(CudaDeviceTest, TracedLaunchesGetKernelTimesThatEndAfterTheyStart) {
  SKIP_WITHOUT_CUDA_DEVICE();
  KernelRegistry kernels;
  RegisterCudaKernels(&kernels);
  auto device = CudaDevice::Create(CudaPlanDevice(), 1, DeviceOptions(), &kernels);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  KernelHarness harness("fill", {IntsAttribute("shape", {1 << 20}), FloatAttribute("value", 2)}, {},
                        {HostTensor::Zeros(DType::kFloat32, {1 << 20})});
  KernelSetup setup;
  setup.plan = &harness.plan();
  setup.actor = &harness.actor();
  auto kernel = kernels.Create(setup);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  auto arena = (*device)->AllocateArena(4 << 20);
  ASSERT_TRUE(arena.ok());
  KernelContext context = (*device)->NewKernelContext(/*queue=*/0);
  TensorView output = harness.output(0).View();
  output.data = (*arena)->base();
  context.outputs.push_back(output);
  context.output_fill_begins.push_back(true);
  WaitingListener listener;
  std::atomic<bool> stopping{false};
  FiringTimes times;
  LaunchRequest request;
  request.kernel = kernel->get();
  request.context = &context;
  request.listener = &listener;
  request.stopping = &stopping;
  request.times = &times;
  Status unused;
  ASSERT_TRUE((*device)->queue(0).ok());
  (*(*device)->queue(0))->Launch(request, &unused);
  ASSERT_TRUE(listener.Wait(1));
  EXPECT_TRUE(listener.completions()[0].status.ok()) << listener.completions()[0].status.ToString();
  EXPECT_GE(times.start.load(), 0);
  EXPECT_GE(times.end.load(), times.start.load());
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
