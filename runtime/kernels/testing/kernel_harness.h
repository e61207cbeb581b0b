// KernelHarness: runs one kernel outside any runtime, for tests and benchmarks. It builds a plan
// with a single actor whose KernelDef describes the given host tensors, creates the kernel from
// a registry, and runs firings with views into the tensors.
//
//   KernelHarness harness("relu", {}, {HostTensor::Float({2, 3}, values)},
//                         {HostTensor::Zeros(DType::kFloat32, {2, 3})});
//   ASSERT_TRUE(harness.Create(registry).ok());
//   ASSERT_TRUE(harness.Run(&runner).ok());
//   harness.output(0).floats ...
#ifndef SOFTWIRE_RUNTIME_KERNELS_TESTING_KERNEL_HARNESS_H_
#define SOFTWIRE_RUNTIME_KERNELS_TESTING_KERNEL_HARNESS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/bfloat16.h"
#include "base/shape.h"
#include "base/status.h"
#include "base/tensor_view.h"
#include "proto/kernel_attributes.h"  // The attribute builders tests use with it.
#include "proto/plan.pb.h"
#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {

// A tensor in host memory: float32 values in `floats`, int32 values in `ints`, or bfloat16
// values in `bf16s`.
struct HostTensor {
  DType dtype = DType::kFloat32;
  Shape shape;
  std::vector<float> floats;
  std::vector<int32_t> ints;
  std::vector<BFloat16> bf16s;

  static HostTensor Float(Shape shape, std::vector<float> values);
  static HostTensor Int(Shape shape, std::vector<int32_t> values);
  // `values` rounded to bfloat16 (ties to even).
  static HostTensor BFloat16s(Shape shape, const std::vector<float>& values);
  static HostTensor Zeros(DType dtype, Shape shape);

  // A view of the values; valid while the tensor lives and is not resized.
  TensorView View();
  proto::TensorDesc Desc() const;
};

class KernelHarness {
 public:
  KernelHarness(const std::string& op_type, const std::vector<proto::Attribute>& attributes,
                std::vector<HostTensor> inputs, std::vector<HostTensor> outputs);

  // The one-actor plan; adjust it (actor kind settings, state_bytes, schedule) before Create.
  proto::Plan& plan() { return plan_; }
  proto::ActorDef& actor() { return *plan_.mutable_actor(0); }

  // Creates the kernel; allocates actor().state_bytes() of zeroed state.
  Status Create(const KernelRegistry& registry, OutputReporter* reporter = nullptr);

  // One firing. `fill_begins` defaults to true for every output.
  Status Run(ParallelRunner* runner, int64_t firing = 0, int64_t first_piece = 0,
             std::vector<bool> fill_begins = {});

  // Runs the kernel with a context built once by PrepareContext(); for measuring Run alone.
  void PrepareContext(ParallelRunner* runner);
  Status RunPrepared();

  // Lays output `output` over input `input` (the same bytes: same type and shape), as the
  // compiler does where plan/register_lifetimes.h KernelMayWriteOver allows it. Runs then write
  // that output into input(input), which output(output) no longer sees.
  void WriteOutputOverInput(int output, int input);

  HostTensor& input(int index) { return inputs_[index]; }
  HostTensor& output(int index) { return outputs_[index]; }
  std::vector<float>& state() { return state_; }

 private:
  proto::Plan plan_;
  std::vector<HostTensor> inputs_;
  std::vector<HostTensor> outputs_;
  std::vector<float> state_;
  std::unique_ptr<Kernel> kernel_;
  KernelContext prepared_;
  std::vector<int> over_input_;  // Per output: the input it is laid over, or -1.
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_TESTING_KERNEL_HARNESS_H_
