#include "runtime/kernels/testing/kernel_harness.h"

#include "proto/tensor_desc.h"

namespace softwire {
namespace runtime {

HostTensor HostTensor::Float(Shape shape, std::vector<float> values) {
  CHECK_EQ(static_cast<int64_t>(values.size()), shape.NumElements()) << shape.ToString();
  HostTensor tensor;
  tensor.dtype = DType::kFloat32;
  tensor.shape = std::move(shape);
  tensor.floats = std::move(values);
  return tensor;
}

HostTensor HostTensor::Int(Shape shape, std::vector<int32_t> values) {
  CHECK_EQ(static_cast<int64_t>(values.size()), shape.NumElements()) << shape.ToString();
  HostTensor tensor;
  tensor.dtype = DType::kInt32;
  tensor.shape = std::move(shape);
  tensor.ints = std::move(values);
  return tensor;
}

HostTensor HostTensor::BFloat16s(Shape shape, const std::vector<float>& values) {
  CHECK_EQ(static_cast<int64_t>(values.size()), shape.NumElements()) << shape.ToString();
  HostTensor tensor;
  tensor.dtype = DType::kBFloat16;
  tensor.shape = std::move(shape);
  for (float value : values) tensor.bf16s.push_back(ToBFloat16(value));
  return tensor;
}

HostTensor HostTensor::Zeros(DType dtype, Shape shape) {
  HostTensor tensor;
  tensor.dtype = dtype;
  const size_t count = static_cast<size_t>(shape.NumElements());
  tensor.shape = std::move(shape);
  if (dtype == DType::kInt32) {
    tensor.ints.assign(count, 0);
  } else if (dtype == DType::kBFloat16) {
    tensor.bf16s.assign(count, BFloat16{});
  } else {
    tensor.floats.assign(count, 0.0f);
  }
  return tensor;
}

TensorView HostTensor::View() {
  TensorView view;
  view.dtype = dtype;
  view.shape = shape;
  view.data = dtype == DType::kInt32      ? static_cast<void*>(ints.data())
              : dtype == DType::kBFloat16 ? static_cast<void*>(bf16s.data())
                                          : static_cast<void*>(floats.data());
  return view;
}

proto::TensorDesc HostTensor::Desc() const {
  return TensorDescOf(dtype, shape);
}

KernelHarness::KernelHarness(const std::string& op_type,
                             const std::vector<proto::Attribute>& attributes,
                             std::vector<HostTensor> inputs, std::vector<HostTensor> outputs)
    : inputs_(std::move(inputs)), outputs_(std::move(outputs)) {
  plan_.set_job_name("kernel_harness");
  plan_.mutable_schedule()->set_steps(1);
  plan_.mutable_schedule()->set_pieces_per_step(1);
  proto::ActorDef* actor = plan_.add_actor();
  actor->set_id(0);
  actor->set_name(op_type + "_under_test");
  actor->set_kind(proto::ACTOR_KIND_COMPUTE);
  actor->set_period(1);
  actor->set_firings(1);
  proto::KernelDef* kernel = actor->mutable_kernel();
  kernel->set_op_type(op_type);
  for (const proto::Attribute& attribute : attributes) *kernel->add_attr() = attribute;
  for (const HostTensor& input : inputs_) *kernel->add_input() = input.Desc();
  for (const HostTensor& output : outputs_) *kernel->add_output() = output.Desc();
}

Status KernelHarness::Create(const KernelRegistry& registry, OutputReporter* reporter) {
  state_.assign(static_cast<size_t>(actor().state_bytes()) / sizeof(float), 0.0f);
  KernelSetup setup;
  setup.plan = &plan_;
  setup.actor = &plan_.actor(0);
  setup.reporter = reporter;
  StatusOr<std::unique_ptr<Kernel>> kernel = registry.Create(setup);
  if (!kernel.ok()) return kernel.status();
  kernel_ = std::move(kernel).value();
  return Status::Ok();
}

void KernelHarness::PrepareContext(ParallelRunner* runner) {
  CHECK(kernel_ != nullptr) << "Create the kernel first";
  prepared_ = KernelContext();
  for (HostTensor& input : inputs_) prepared_.inputs.push_back(input.View());
  for (size_t output = 0; output < outputs_.size(); ++output) {
    const bool over = output < over_input_.size() && over_input_[output] >= 0;
    prepared_.outputs.push_back(over ? inputs_[static_cast<size_t>(over_input_[output])].View()
                                     : outputs_[output].View());
  }
  prepared_.output_fill_begins.assign(outputs_.size(), true);
  prepared_.state = state_.empty() ? nullptr : state_.data();
  prepared_.parallel = runner;
}

void KernelHarness::WriteOutputOverInput(int output, int input) {
  const HostTensor& written = outputs_.at(static_cast<size_t>(output));
  const HostTensor& read = inputs_.at(static_cast<size_t>(input));
  CHECK(written.dtype == read.dtype && written.shape == read.shape)
      << "output " << output << " and input " << input << " differ in type or shape";
  over_input_.resize(outputs_.size(), -1);
  over_input_[static_cast<size_t>(output)] = input;
}

Status KernelHarness::RunPrepared() {
  return kernel_->Run(prepared_);
}

Status KernelHarness::Run(ParallelRunner* runner, int64_t firing, int64_t first_piece,
                          std::vector<bool> fill_begins) {
  PrepareContext(runner);
  prepared_.firing = firing;
  prepared_.first_piece = first_piece;
  if (!fill_begins.empty()) prepared_.output_fill_begins = std::move(fill_begins);
  return RunPrepared();
}

}  // namespace runtime
}  // namespace softwire
