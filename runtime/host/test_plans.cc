#include "runtime/host/test_plans.h"

#include <glog/logging.h>

#include <map>
#include <thread>

#include "plan/testing/kind_settings.h"

namespace softwire {
namespace runtime {
namespace testing {
namespace {

constexpr int64_t kAlignment = 64;

int64_t RoundUp(int64_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

int64_t IntAttr(const proto::KernelDef& kernel, const std::string& name, int64_t fallback) {
  for (const proto::Attribute& attr : kernel.attr()) {
    if (attr.name() == name) return attr.int_();
  }
  return fallback;
}

void FillWith(const TensorView& view, float value) {
  float* data = view.As<float>();
  for (int64_t i = 0; i < view.NumElements(); ++i) data[i] = value;
}

// One kernel type with its behaviour as a function, logging every run.
class TestKernel final : public Kernel {
 public:
  using Body = std::function<Status(const KernelContext&)>;
  TestKernel(std::string actor, KernelLog* log, Body body)
      : actor_(std::move(actor)), log_(log), body_(std::move(body)) {}

  Status Run(const KernelContext& context) override {
    if (log_ == nullptr) return body_(context);  // Benchmarks: no clock reads.
    KernelLog::Run run;
    run.actor = actor_;
    run.firing = context.firing;
    run.first_piece = context.first_piece;
    run.start = std::chrono::steady_clock::now();
    Status status = body_(context);
    run.end = std::chrono::steady_clock::now();
    log_->Add(run);
    return status;
  }

 private:
  std::string actor_;
  KernelLog* log_;
  Body body_;
};

void Register(KernelRegistry* registry, KernelLog* log, const std::string& op_type,
              std::function<TestKernel::Body(const KernelSetup&)> make_body) {
  registry->Register(op_type, [=](const KernelSetup& setup) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(
        std::make_unique<TestKernel>(setup.actor->name(), log, make_body(setup)));
  });
}

Status Double(const KernelContext& context) {
  const float* input = context.inputs[0].As<float>();
  float* output = context.outputs[0].As<float>();
  for (int64_t i = 0; i < context.outputs[0].NumElements(); ++i) output[i] = 2 * input[i];
  return Status::Ok();
}

}  // namespace

TestPlan::TestPlan(int64_t steps, int64_t pieces_per_step)
    : steps_(steps), pieces_per_step_(pieces_per_step) {}

TestPlan& TestPlan::Register(const std::string& name, int slots, std::vector<int64_t> dims) {
  registers_.emplace_back(name, slots);
  register_dims_.push_back(std::move(dims));
  return *this;
}

TestPlan& TestPlan::Actor(const TestActorSpec& spec) {
  actors_.push_back(spec);
  return *this;
}

TestPlan& TestPlan::Output(const std::string& sink, bool is_loss) {
  outputs_.emplace_back(sink, is_loss);
  return *this;
}

TestPlan& TestPlan::Variable(const std::string& name, std::vector<int64_t> dims,
                             std::vector<Part> parts) {
  variables_.push_back(VariableSpec{name, std::move(dims), std::move(parts)});
  return *this;
}

TestPlan& TestPlan::Cores(int cores) {
  cores_ = cores;
  return *this;
}

TestPlan& TestPlan::ExtraBytes(int64_t bytes) {
  extra_bytes_ = bytes;
  return *this;
}

TestPlan& TestPlan::DeviceKind(proto::DeviceKind kind) {
  device_kind_ = kind;
  return *this;
}

proto::Plan TestPlan::Build() const {
  proto::Plan plan;
  plan.set_job_name("runtime_test");
  plan.mutable_schedule()->set_steps(steps_);
  plan.mutable_schedule()->set_pieces_per_step(pieces_per_step_);
  plan.mutable_schedule()->set_micro_batch_size(1);
  const int64_t total_pieces = steps_ * pieces_per_step_;

  std::map<std::string, int64_t> register_ids;
  for (size_t i = 0; i < registers_.size(); ++i) {
    proto::RegisterDef* r = plan.add_register_def();
    r->set_id(static_cast<int64_t>(i));
    r->set_name(registers_[i].first);
    r->set_slots(registers_[i].second);
    r->mutable_tensor()->set_dtype(proto::DATA_TYPE_FLOAT32);
    int64_t elements = 1;
    for (int64_t dim : register_dims_[i]) {
      r->mutable_tensor()->add_dims(dim);
      elements *= dim;
    }
    r->set_bytes_per_slot(RoundUp(elements * 4));
    r->set_producer(-1);
    register_ids[registers_[i].first] = r->id();
  }
  std::map<std::string, int64_t> actor_ids;
  int devices = 1;
  for (size_t i = 0; i < actors_.size(); ++i) {
    const TestActorSpec& spec = actors_[i];
    proto::ActorDef* actor = plan.add_actor();
    actor->set_id(static_cast<int64_t>(i));
    actor->set_name(spec.name);
    actor->set_kind(spec.kind);
    actor->set_device(spec.device);
    actor->set_queue(spec.queue);
    actor->set_estimated_seconds(spec.estimated_seconds);
    devices = std::max(devices, spec.device + 1);
    int64_t period = plan::testing::FiresOncePerStep(spec.kind) ? pieces_per_step_ : 1;
    actor->set_period(period);
    actor->set_firings(total_pieces / period);
    actor->mutable_kernel()->set_op_type(spec.op_type);
    for (const auto& [name, value] : spec.int_attrs) {
      proto::Attribute* attr = actor->mutable_kernel()->add_attr();
      attr->set_name(name);
      attr->set_int_(value);
    }
    for (const std::string& input : spec.inputs) {
      CHECK(register_ids.count(input)) << input;
      int64_t id = register_ids[input];
      actor->add_input_register(id);
      proto::RegisterConsumer* consumer = plan.mutable_register_def(id)->add_consumer();
      consumer->set_actor(actor->id());
      consumer->set_phase(0);
    }
    for (const std::string& output : spec.outputs) {
      CHECK(register_ids.count(output)) << output;
      proto::RegisterDef* r = plan.mutable_register_def(register_ids[output]);
      CHECK_EQ(r->producer(), -1) << output << " has two producers";
      r->set_producer(actor->id());
      r->set_device(spec.device);
      r->set_period(period);
      actor->add_output_register(r->id());
    }
    plan::testing::KindNames names;
    names.dataset = spec.name;
    names.outputs = spec.outputs;
    names.variable = spec.name;
    names.sink_output = spec.sink_output.empty() ? spec.name : spec.sink_output;
    plan::testing::SetKindSettings(names, pieces_per_step_, actor);
    actor_ids[spec.name] = actor->id();
  }
  std::vector<int64_t> used(devices, 0);
  for (proto::RegisterDef& r : *plan.mutable_register_def()) {
    CHECK_GE(r.producer(), 0) << r.name() << " has no producer";
    r.set_offset(used[r.device()]);
    used[r.device()] += r.slots() * r.bytes_per_slot();
  }
  for (int d = 0; d < devices; ++d) {
    proto::PlanDevice* device = plan.add_device();
    device->set_id(d);
    device->set_node("node0");
    device->set_name((device_kind_ == proto::DEVICE_KIND_SIM ? "sim:" : "cpu:") +
                     std::to_string(d));
    device->set_kind(device_kind_);
    device->set_cores(cores_);
    device->set_register_bytes(used[d]);
    device->set_planned_bytes(used[d] + extra_bytes_);
  }
  for (const auto& [sink, is_loss] : outputs_) {
    CHECK(actor_ids.count(sink)) << sink;
    proto::PlanOutput* output = plan.add_output();
    output->set_name(plan.actor(static_cast<int>(actor_ids[sink])).sink().output());
    output->set_is_loss(is_loss);
    output->set_sink_actor(actor_ids[sink]);
  }
  for (const VariableSpec& spec : variables_) {
    proto::PlanVariable* variable = plan.add_variable();
    variable->set_name(spec.name);
    variable->mutable_tensor()->set_dtype(proto::DATA_TYPE_FLOAT32);
    for (int64_t dim : spec.dims) variable->mutable_tensor()->add_dims(dim);
    for (const Part& part : spec.parts) {
      proto::VariablePart* plan_part = variable->add_part();
      plan_part->set_register_id(register_ids.at(part.register_name));
      plan_part->set_split_axis(part.split_axis);
      plan_part->set_split_begin(part.begin);
      plan_part->set_split_end(part.end);
    }
  }
  return plan;
}

void KernelLog::Add(Run run) {
  std::lock_guard<std::mutex> lock(mutex_);
  runs_.push_back(std::move(run));
}

void KernelLog::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  runs_.clear();
}

std::vector<KernelLog::Run> KernelLog::Runs(const std::string& actor) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Run> runs;
  for (const Run& run : runs_) {
    if (run.actor == actor) runs.push_back(run);
  }
  return runs;
}

void RegisterTestKernels(KernelRegistry* registry, KernelLog* log) {
  Register(registry, log, "piece_source", [](const KernelSetup&) {
    return [](const KernelContext& context) {
      for (const TensorView& output : context.outputs) {
        FillWith(output, static_cast<float>(context.first_piece));
      }
      return Status::Ok();
    };
  });
  Register(registry, log, "double", [](const KernelSetup&) { return Double; });
  Register(registry, log, "report", [](const KernelSetup& setup) {
    OutputReporter* reporter = setup.reporter;
    std::string output = setup.actor->sink().output();
    return [reporter, output](const KernelContext& context) {
      reporter->Report(output, context.first_piece, context.inputs[0].As<float>()[0]);
      return Status::Ok();
    };
  });
  Register(registry, log, "sleep", [](const KernelSetup& setup) {
    auto micros = std::chrono::microseconds(IntAttr(setup.actor->kernel(), "micros", 1000));
    return [micros](const KernelContext& context) {
      std::this_thread::sleep_for(micros);
      for (const TensorView& output : context.outputs) {
        FillWith(output, context.inputs.empty() ? static_cast<float>(context.first_piece)
                                                : context.inputs[0].As<float>()[0]);
      }
      return Status::Ok();
    };
  });
  Register(registry, log, "fail_at", [](const KernelSetup& setup) {
    int64_t fail_at = IntAttr(setup.actor->kernel(), "firing", 0);
    return [fail_at](const KernelContext& context) {
      if (context.firing == fail_at) {
        return InternalError("injected failure at firing " + std::to_string(fail_at));
      }
      return Double(context);
    };
  });
  Register(registry, log, "part_fill", [](const KernelSetup& setup) {
    int64_t first = IntAttr(setup.actor->kernel(), "first", 0);
    return [first](const KernelContext& context) {
      if (context.firing > 0) return Status::Ok();
      float* data = context.outputs[0].As<float>();
      for (int64_t i = 0; i < context.outputs[0].NumElements(); ++i) {
        data[i] = static_cast<float>(first + i);
      }
      return Status::Ok();
    };
  });
  Register(registry, log, "noop",
           [](const KernelSetup&) { return [](const KernelContext&) { return Status::Ok(); }; });
}

void PlaceWireOnReceiver(proto::Plan* plan, int wire, const std::string& node) {
  proto::PlanDevice* receiver = plan->mutable_device(1);
  receiver->set_node(node);
  proto::RegisterDef* wire_register = plan->mutable_register_def(wire);
  wire_register->set_device(1);
  wire_register->set_offset(receiver->planned_bytes());
  const int64_t bytes = wire_register->slots() * wire_register->bytes_per_slot();
  receiver->set_register_bytes(receiver->register_bytes() + bytes);
  receiver->set_planned_bytes(receiver->planned_bytes() + bytes);
}

}  // namespace testing
}  // namespace runtime
}  // namespace softwire
