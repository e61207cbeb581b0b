#include "runtime/device/cpu/cpu_device.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace softwire {
namespace runtime {
namespace {

// Tells nobody: the launches of these tests run inline.
class SilentListener final : public LaunchListener {
 public:
  void OnLaunchCompleted(int64_t, int64_t, Status) override {}
};

// Runs until `open` is set, or gives up after 10 s with an error (so a device whose queues
// share one strand fails the test instead of hanging it).
class WaitForKernel final : public Kernel {
 public:
  explicit WaitForKernel(const std::atomic<bool>* open) : open_(open) {}
  Status Run(const KernelContext&) override {
    entered.store(true);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!open_->load()) {
      if (std::chrono::steady_clock::now() > deadline) {
        return DeadlineExceededError("the copy queue's kernel never ran");
      }
      std::this_thread::yield();
    }
    return Status::Ok();
  }
  std::atomic<bool> entered{false};

 private:
  const std::atomic<bool>* open_;
};

// Sets `flag` and reports the threads of the runner it was given.
class SetFlagKernel final : public Kernel {
 public:
  explicit SetFlagKernel(std::atomic<bool>* flag) : flag_(flag) {}
  Status Run(const KernelContext& context) override {
    runner_threads = context.parallel->threads();
    flag_->store(true);
    return Status::Ok();
  }
  int runner_threads = 0;

 private:
  std::atomic<bool>* flag_;
};

proto::PlanDevice TwoCoreDevice() {
  proto::PlanDevice device;
  device.set_id(0);
  device.set_node("node0");
  device.set_name("cpu:0");
  device.set_kind(proto::DEVICE_KIND_CPU);
  device.set_cores(2);
  return device;
}

LaunchRequest RequestFor(int64_t actor, Kernel* kernel, const KernelContext* context,
                         LaunchListener* listener, const std::atomic<bool>* stopping) {
  LaunchRequest request;
  request.actor = actor;
  request.kernel = kernel;
  request.context = context;
  request.listener = listener;
  request.stopping = stopping;
  return request;
}

TEST(CpuDeviceTest, TheComputeQueueHasAStrandOfItsOwnAndEveryCopyQueueSharesAnother) {
  CpuDevice device(TwoCoreDevice(), DeviceOptions(), /*kernels=*/nullptr);
  StatusOr<DeviceQueue*> compute = device.queue(0);
  StatusOr<DeviceQueue*> copy = device.queue(1);
  StatusOr<DeviceQueue*> second_copy = device.queue(2);
  ASSERT_TRUE(compute.ok() && copy.ok() && second_copy.ok());
  EXPECT_NE(*compute, *copy);
  EXPECT_EQ(*copy, *second_copy);
  EXPECT_FALSE(device.queue(-1).ok());
}

TEST(CpuDeviceTest, ComputeKernelsSpreadOverTheCoresAndCopyKernelsRunOnTheirHolderAlone) {
  CpuDevice device(TwoCoreDevice(), DeviceOptions(), /*kernels=*/nullptr);
  EXPECT_EQ(device.kernel_threads(), 2);
  EXPECT_EQ(device.NewKernelContext(0).parallel->threads(), 2);
  EXPECT_EQ(device.NewKernelContext(1).parallel->threads(), 1);
  EXPECT_EQ(device.NewKernelContext(1).device, &device);
}

// What the copy strand is for: a pipeline's send or copy does not wait for the compute kernel
// the device is running. The compute kernel here finishes only once the copy kernel ran.
TEST(CpuDeviceTest, ACopyQueueKernelRunsWhileAComputeKernelHoldsTheDevice) {
  CpuDevice device(TwoCoreDevice(), DeviceOptions(), /*kernels=*/nullptr);
  SilentListener listener;
  std::atomic<bool> stopping{false};
  std::atomic<bool> copied{false};
  WaitForKernel compute_kernel(&copied);
  SetFlagKernel copy_kernel(&copied);
  const KernelContext compute_context = device.NewKernelContext(0);
  const KernelContext copy_context = device.NewKernelContext(1);
  DeviceQueue* compute = *device.queue(0);
  DeviceQueue* copy = *device.queue(1);

  Status compute_status = InternalError("unset");
  std::thread computing([&] {
    EXPECT_EQ(
        compute->Launch(RequestFor(1, &compute_kernel, &compute_context, &listener, &stopping),
                        &compute_status),
        DeviceQueue::Outcome::kRanInline);
    compute->ReleaseInline();
  });
  while (!compute_kernel.entered.load()) std::this_thread::yield();
  Status copy_status = InternalError("unset");
  EXPECT_EQ(
      copy->Launch(RequestFor(2, &copy_kernel, &copy_context, &listener, &stopping), &copy_status),
      DeviceQueue::Outcome::kRanInline)
      << "the copy strand was free while the compute strand was held";
  copy->ReleaseInline();
  computing.join();
  EXPECT_TRUE(copy_status.ok()) << copy_status;
  EXPECT_TRUE(compute_status.ok()) << compute_status;
  EXPECT_EQ(copy_kernel.runner_threads, 1);
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
