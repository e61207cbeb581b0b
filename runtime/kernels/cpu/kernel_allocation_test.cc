// Kernels allocate nothing when they run (docs/OPS.md "Memory a kernel may use"): this binary
// counts the operator new calls made on the thread running a kernel's Run
// (base/testing/allocation_counter.h), and runs every cpu kernel through its parallel path.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>

#include "base/testing/allocation_counter.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/testing/kernel_harness.h"

namespace softwire {
namespace runtime {
namespace {

// Claims two threads but runs every range inline, split in two: kernels take their parallel
// path (and build the std::function they pass to ParallelFor) without any thread being started.
class InlineSplittingRunner final : public ParallelRunner {
 public:
  void ParallelFor(int64_t count, int64_t min_chunk,
                   const std::function<void(int64_t, int64_t)>& body) override {
    ++calls;
    if (count <= 0) return;
    const int64_t middle = count / 2;
    if (middle > 0) body(0, middle);
    body(middle, count);
  }
  int threads() const override { return 2; }
  int64_t calls = 0;
};

HostTensor Floats(const Shape& shape) {
  HostTensor tensor = HostTensor::Zeros(DType::kFloat32, shape);
  for (size_t i = 0; i < tensor.floats.size(); ++i) tensor.floats[i] = 0.001f * (i % 1000);
  return tensor;
}
HostTensor Ints(const Shape& shape, int32_t bound) {
  HostTensor tensor = HostTensor::Zeros(DType::kInt32, shape);
  for (size_t i = 0; i < tensor.ints.size(); ++i) tensor.ints[i] = static_cast<int32_t>(i % bound);
  return tensor;
}

struct Case {
  std::string op_type;
  std::vector<proto::Attribute> attributes;
  std::vector<HostTensor> inputs;
  std::vector<HostTensor> outputs;
  int64_t state_bytes = 0;
};

// Every compute and update kernel, at sizes that take the parallel path. (source runs data/'s
// Dataset::Fill, whose argument checks build Shapes; variable and sink only call out of the
// kernel library.)
std::vector<Case> Cases() {
  const Shape big({512, 256});
  const Shape rows({512});
  const Shape channels({256});
  return {
      {"matmul",
       {},
       {Floats(Shape({128, 64})), Floats(Shape({64, 96}))},
       {Floats(Shape({128, 96}))}},
      {"batch_matmul",
       {},
       {Floats(Shape({256, 8, 8})), Floats(Shape({256, 8, 8}))},
       {Floats(Shape({256, 8, 8}))}},
      {"add", {}, {Floats(big), Floats(channels)}, {Floats(big)}},
      {"sub", {}, {Floats(big), Floats(big)}, {Floats(big)}},
      {"mul", {}, {Floats(Shape({512, 1})), Floats(channels)}, {Floats(big)}},
      {"scale", {FloatAttribute("factor", 2)}, {Floats(big)}, {Floats(big)}},
      {"identity", {}, {Floats(big)}, {Floats(big)}},
      {"cast",
       {StringAttribute("dtype", "bfloat16")},
       {Floats(big)},
       {HostTensor::Zeros(DType::kBFloat16, big)}},
      {"cast",
       {StringAttribute("dtype", "float32")},
       {HostTensor::Zeros(DType::kBFloat16, big)},
       {Floats(big)}},
      {"reshape", {IntsAttribute("shape", {-1})}, {Floats(big)}, {Floats(Shape({512 * 256}))}},
      {"fill", {IntsAttribute("shape", big.dims()), FloatAttribute("value", 1)}, {}, {Floats(big)}},
      {"add_n", {}, {Floats(big), Floats(big), Floats(big)}, {Floats(big)}},
      {"relu", {}, {Floats(big)}, {Floats(big)}},
      {"relu_grad", {}, {Floats(big), Floats(big)}, {Floats(big)}},
      {"gelu", {}, {Floats(big)}, {Floats(big)}},
      {"gelu_grad", {}, {Floats(big), Floats(big)}, {Floats(big)}},
      {"bias_add", {}, {Floats(big), Floats(channels)}, {Floats(big)}},
      {"bias_add_grad", {}, {Floats(big)}, {Floats(channels)}},
      {"softmax", {}, {Floats(big)}, {Floats(big)}},
      {"softmax",
       {BoolAttribute("causal", true)},
       {Floats(Shape({4, 256, 256}))},
       {Floats(Shape({4, 256, 256}))}},
      {"softmax_grad", {}, {Floats(big), Floats(big)}, {Floats(big)}},
      {"softmax_cross_entropy", {}, {Floats(big), Ints(rows, 256)}, {Floats(rows)}},
      {"softmax_cross_entropy_grad",
       {},
       {Floats(rows), Floats(big), Ints(rows, 256)},
       {Floats(big)}},
      {"accuracy", {}, {Floats(big), Ints(rows, 256)}, {Floats(Shape())}},
      {"layer_norm", {}, {Floats(big), Floats(channels), Floats(channels)}, {Floats(big)}},
      {"layer_norm_grad",
       {},
       {Floats(big), Floats(big), Floats(channels)},
       {Floats(big), Floats(channels), Floats(channels)}},
      {"reduce_sum", {}, {Floats(big)}, {Floats(Shape())}},
      {"reduce_sum", {IntsAttribute("axes", {0})}, {Floats(big)}, {Floats(channels)}},
      {"reduce_mean", {IntsAttribute("axes", {1})}, {Floats(big)}, {Floats(rows)}},
      {"sum_to_shape",
       {IntsAttribute("shape", {1, 256})},
       {Floats(big)},
       {Floats(Shape({1, 256}))}},
      {"broadcast_axes",
       {IntsAttribute("shape", big.dims()), IntsAttribute("axes", {0})},
       {Floats(channels)},
       {Floats(big)}},
      {"transpose", {IntsAttribute("perm", {1, 0})}, {Floats(big)}, {Floats(Shape({256, 512}))}},
      {"transpose",
       {IntsAttribute("perm", {1, 0, 2})},
       {Floats(Shape({64, 32, 64}))},
       {Floats(Shape({32, 64, 64}))}},
      {"embedding", {}, {Floats(Shape({300, 256})), Ints(rows, 300)}, {Floats(big)}},
      {"embedding_grad",
       {IntAttribute("num_embeddings", 300)},
       {Floats(big), Ints(rows, 300)},
       {Floats(Shape({300, 256}))}},
      {"accumulate", {}, {Floats(big)}, {Floats(big)}},
      {"copy", {}, {Floats(big)}, {Floats(big)}},
      {"slice",
       {IntsAttribute("begin", {0, 128}), IntsAttribute("end", {512, 256})},
       {Floats(big)},
       {Floats(Shape({512, 128}))}},
      {"assemble",
       {IntsAttribute("shape", big.dims()), IntsAttribute("offsets", {0, 0, 0, 128})},
       {Floats(Shape({512, 128})), Floats(Shape({512, 128}))},
       {Floats(big)}},
      {"flat_split",
       {IntsAttribute("sizes", {512 * 128, 512 * 128})},
       {Floats(big)},
       {Floats(Shape({512 * 128})), Floats(Shape({512 * 128}))}},
      {"flat_concat",
       {IntsAttribute("shape", big.dims())},
       {Floats(Shape({512 * 128})), Floats(Shape({512 * 128}))},
       {Floats(big)}},
      {"sgd_update",
       {FloatAttribute("learning_rate", 0.1), FloatAttribute("momentum", 0.9)},
       {Floats(big), Floats(big)},
       {},
       512 * 256 * 4},
      {"adam_update",
       {FloatAttribute("learning_rate", 0.1)},
       {Floats(big), Floats(big)},
       {},
       512 * 256 * 8},
  };
}

TEST(KernelAllocation, TheCounterSeesAnAllocationOnTheCountingThread) {
  softwire::testing::AllocationCounter counter;
  std::unique_ptr<int> allocated(new int(1));
  EXPECT_EQ(counter.allocations(), 1);
}

TEST(KernelAllocation, NoCpuKernelAllocatesWhileItRuns) {
  KernelRegistry registry;
  RegisterCpuKernels(&registry);
  SetBlasThreads(1);  // So that matmul, too, splits its product over the runner.
  InlineSplittingRunner runner;
  for (Case& c : Cases()) {
    SCOPED_TRACE(c.op_type);
    KernelHarness harness(c.op_type, c.attributes, std::move(c.inputs), std::move(c.outputs));
    harness.actor().set_state_bytes(c.state_bytes);
    Status created = harness.Create(registry);
    ASSERT_TRUE(created.ok()) << created;
    harness.PrepareContext(&runner);
    const int64_t calls_before = runner.calls;
    int64_t allocations = 0;
    Status ran;
    {
      softwire::testing::AllocationCounter counter;
      ran = harness.RunPrepared();
      allocations = counter.allocations();
    }
    ASSERT_TRUE(ran.ok()) << ran;
    EXPECT_EQ(allocations, 0) << c.op_type << " allocated while running";
    EXPECT_GT(runner.calls, calls_before) << c.op_type << " did not take its parallel path";
  }
}

// bf16 products: the float32 fallback (inputs widened into buffers made at creation) allocates
// nothing; oneDNN's native path builds an execution context per call inside the library (a few
// small maps), which this test measures rather than forbids.
TEST(KernelAllocation, Bf16ProductsAllocateNothingOnTheFallbackPath) {
  KernelRegistry registry;
  RegisterCpuKernels(&registry);
  InlineSplittingRunner runner;
  for (const bool native : {false, true}) {
    if (!native) setenv("SOFTWIRE_CPU_FEATURES_OFF", "avx512_bf16,amx_bf16", 1);
    KernelHarness harness("matmul", {},
                          {HostTensor::Zeros(DType::kBFloat16, Shape({256, 128})),
                           HostTensor::Zeros(DType::kBFloat16, Shape({128, 96}))},
                          {Floats(Shape({256, 96}))});
    Status created = harness.Create(registry);
    unsetenv("SOFTWIRE_CPU_FEATURES_OFF");
    ASSERT_TRUE(created.ok()) << created;
    harness.PrepareContext(&runner);
    ASSERT_TRUE(harness.RunPrepared().ok());  // A first run may set up per-thread state.
    int64_t allocations = 0;
    {
      softwire::testing::AllocationCounter counter;
      ASSERT_TRUE(harness.RunPrepared().ok());
      allocations = counter.allocations();
    }
    if (native) {
      RecordProperty("native_allocations_per_run", std::to_string(allocations));
    } else {
      EXPECT_EQ(allocations, 0) << "the bf16 fallback allocated while running";
    }
  }
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
