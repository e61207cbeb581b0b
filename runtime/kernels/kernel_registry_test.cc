#include <gtest/gtest.h>

#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {
namespace {

// A kernel that counts its firings, made by a factory that can be told to fail.
class CountingKernel final : public Kernel {
 public:
  explicit CountingKernel(int* firings) : firings_(firings) {}
  Status Run(const KernelContext&) override {
    ++*firings_;
    return Status::Ok();
  }

 private:
  int* firings_;
};

proto::ActorDef ActorRunning(const std::string& op_type) {
  proto::ActorDef actor;
  actor.set_name("fc1");
  actor.mutable_kernel()->set_op_type(op_type);
  return actor;
}

TEST(KernelRegistry, CreatesTheKernelRegisteredForTheActorsOpType) {
  int firings = 0;
  KernelRegistry registry;
  registry.Register("count", [&firings](const KernelSetup&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new CountingKernel(&firings));
  });
  proto::ActorDef actor = ActorRunning("count");
  KernelSetup setup;
  setup.actor = &actor;
  StatusOr<std::unique_ptr<Kernel>> kernel = registry.Create(setup);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  SerialRunner runner;
  KernelContext context;
  context.parallel = &runner;
  ASSERT_TRUE((*kernel)->Run(context).ok());
  EXPECT_EQ(firings, 1);
}

TEST(KernelRegistry, ListsItsOpTypesInOrderAndAnswersContains) {
  KernelRegistry registry;
  auto factory = [](const KernelSetup&) -> StatusOr<std::unique_ptr<Kernel>> {
    return InternalError("unused");
  };
  registry.Register("relu", factory);
  registry.Register("add", factory);
  EXPECT_EQ(registry.OpTypes(), (std::vector<std::string>{"add", "relu"}));
  EXPECT_TRUE(registry.Contains("relu"));
  EXPECT_FALSE(registry.Contains("gelu"));
}

TEST(KernelRegistry, ReportsAnUnknownOpTypeAsNotFoundNamingOpAndActor) {
  KernelRegistry registry;
  proto::ActorDef actor = ActorRunning("warp_drive");
  KernelSetup setup;
  setup.actor = &actor;
  StatusOr<std::unique_ptr<Kernel>> kernel = registry.Create(setup);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), StatusCode::kNotFound);
  EXPECT_NE(kernel.status().message().find("warp_drive"), std::string::npos);
  EXPECT_NE(kernel.status().message().find("fc1"), std::string::npos);
}

TEST(KernelRegistry, PrefixesFactoryErrorsWithTheActorName) {
  KernelRegistry registry;
  registry.Register("matmul", [](const KernelSetup&) -> StatusOr<std::unique_ptr<Kernel>> {
    return InvalidArgumentError("matmul: inner extents differ");
  });
  proto::ActorDef actor = ActorRunning("matmul");
  KernelSetup setup;
  setup.actor = &actor;
  StatusOr<std::unique_ptr<Kernel>> kernel = registry.Create(setup);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(kernel.status().message(), "actor 'fc1': matmul: inner extents differ");
}

TEST(KernelRegistryDeathTest, RefusesToRegisterAnOpTypeTwice) {
  KernelRegistry registry;
  auto factory = [](const KernelSetup&) -> StatusOr<std::unique_ptr<Kernel>> {
    return InternalError("unused");
  };
  registry.Register("relu", factory);
  EXPECT_DEATH(registry.Register("relu", factory), "registered twice");
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
