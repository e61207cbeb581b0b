#include "reference/interpreter/plan_run.h"

#include <algorithm>
#include <string>
#include <utility>

#include "base/bfloat16.h"
#include "base/tensor_view.h"
#include "data/initializer.h"
#include "plan/fill_arithmetic.h"
#include "plan/labels.h"
#include "proto/tensor_desc.h"
#include "reference/interpreter/firing_order.h"

namespace softwire {
namespace reference {
namespace {

ReferenceTensor ZeroTensor(const proto::TensorDesc& desc) {
  ReferenceTensor tensor;
  tensor.dtype = DTypeOf(desc);
  tensor.shape = ShapeOf(desc);
  tensor.values.assign(static_cast<size_t>(tensor.shape.NumElements()), 0.0);
  return tensor;
}

bool InRange(int64_t id, int size) {
  return id >= 0 && id < size;
}

}  // namespace

PlanRun::PlanRun(const proto::Plan& plan, int64_t steps, data::DataRoot data_root)
    : plan_(plan),
      steps_(steps),
      data_root_(std::move(data_root)),
      total_pieces_(steps * plan.schedule().pieces_per_step()),
      kernels_(MakeReferenceKernels()),
      registers_(plan) {}

// These checks are the reference's own on purpose, not plan::CheckPlanInvariants: the reference
// is an independent oracle for the engines, so it must not share their acceptance of a plan
// (reference/README.md). It shares only the protocol's fill arithmetic and the labels.
Status PlanRun::Prepare() {
  if (plan_.schedule().pieces_per_step() < 1) {
    return InvalidArgumentError("reference: pieces_per_step must be >= 1");
  }
  const int64_t period_unit = plan_.schedule().steps() * plan_.schedule().pieces_per_step();
  for (int i = 0; i < plan_.register_def_size(); ++i) {
    const proto::RegisterDef& r = plan_.register_def(i);
    if (r.id() != i || !InRange(r.producer(), plan_.actor_size()) || r.period() < 1 ||
        period_unit % r.period() != 0) {
      return InvalidArgumentError("reference: " + plan::RegisterLabel(r.name()) +
                                  " has a bad id, producer or period");
    }
    for (const proto::RegisterConsumer& c : r.consumer()) {
      if (!InRange(c.actor(), plan_.actor_size())) {
        return InvalidArgumentError("reference: " + plan::RegisterLabel(r.name()) +
                                    " has a bad consumer");
      }
    }
  }
  for (int i = 0; i < plan_.actor_size(); ++i) SOFTWIRE_RETURN_IF_ERROR(CheckActor(i));
  for (const proto::PlanOutput& output : plan_.output()) {
    if (!InRange(output.sink_actor(), plan_.actor_size()) ||
        plan_.actor(output.sink_actor()).kind() != proto::ACTOR_KIND_SINK) {
      return InvalidArgumentError("reference: output '" + output.name() +
                                  "' is not observed by a sink actor");
    }
  }
  for (const proto::PlanVariable& variable : plan_.variable()) {
    for (const proto::VariablePart& part : variable.part()) {
      if (!InRange(part.register_id(), plan_.register_def_size()) ||
          plan_.actor(plan_.register_def(part.register_id()).producer()).kind() !=
              proto::ACTOR_KIND_VARIABLE) {
        return InvalidArgumentError("reference: variable '" + variable.name() +
                                    "' has a part that no variable actor writes");
      }
    }
  }
  SOFTWIRE_ASSIGN_OR_RETURN(order_, OrderActors(plan_));
  actors_.resize(plan_.actor_size());
  for (int i = 0; i < plan_.actor_size(); ++i) {
    ActorRun& run = actors_[i];
    run.def = &plan_.actor(i);
    run.firings = total_pieces_ / run.def->period();
    SOFTWIRE_RETURN_IF_ERROR(PrepareActor(&run).WithContext(plan::ActorLabel(run.def->name())));
  }
  return Status::Ok();
}

Status PlanRun::CheckActor(int index) const {
  const proto::ActorDef& actor = plan_.actor(index);
  const std::string label = "reference: " + plan::ActorLabel(actor.name());
  if (actor.id() != index || actor.period() < 1 || total_pieces_ % actor.period() != 0) {
    return InvalidArgumentError(label + " has a bad id, or a period that does not divide the " +
                                std::to_string(total_pieces_) + " pieces to run");
  }
  for (int64_t r : actor.input_register()) {
    if (!InRange(r, plan_.register_def_size()) || plan_.register_def(r).period() % actor.period()) {
      return InvalidArgumentError(label +
                                  " reads a register that does not exist or whose "
                                  "period its period does not divide");
    }
  }
  for (int64_t r : actor.output_register()) {
    if (!InRange(r, plan_.register_def_size()) || plan_.register_def(r).producer() != actor.id() ||
        plan_.register_def(r).period() % actor.period()) {
      return InvalidArgumentError(label +
                                  " writes a register that does not exist, names another "
                                  "producer, or whose period its period does not "
                                  "divide");
    }
  }
  auto expect = [&](bool ok, const char* rule) {
    return ok ? Status::Ok() : InvalidArgumentError(label + ": " + rule);
  };
  const int inputs = actor.input_register_size();
  const int outputs = actor.output_register_size();
  // Ordering inputs (docs/PROTOCOL.md): input registers beyond those the kernel describes.
  if (actor.kernel().input_size() > inputs ||
      (actor.kernel().input_size() > 0 && actor.kernel().input_size() < inputs &&
       actor.kind() != proto::ACTOR_KIND_COMPUTE)) {
    return InvalidArgumentError(label + ": its kernel describes " +
                                std::to_string(actor.kernel().input_size()) + " of its " +
                                std::to_string(inputs) +
                                " inputs; only a compute actor may wait for inputs its kernel "
                                "does not read, and none may describe more");
  }
  switch (actor.kind()) {
    case proto::ACTOR_KIND_SOURCE:
      return expect(inputs == 0 && actor.period() == 1, "a source reads nothing, per piece");
    case proto::ACTOR_KIND_VARIABLE:
      return expect(inputs == 0 && outputs == 1, "a variable writes exactly its value");
    case proto::ACTOR_KIND_ACCUMULATE:
      return expect(inputs == 1 && outputs == 1, "an accumulate reads one value, writes one sum");
    case proto::ACTOR_KIND_UPDATE:
      // A third input: the variable's bfloat16 copy, which it writes too (fold_weight_casts).
      return expect(
          (inputs == 2 || inputs == 3) && outputs == 0 &&
              plan_.actor(plan_.register_def(actor.input_register(1)).producer()).kind() ==
                  proto::ACTOR_KIND_VARIABLE,
          "an update reads (gradient, variable written by a variable actor[, its copy])");
    case proto::ACTOR_KIND_SINK:
      return expect(inputs == 1 && actor.period() == 1, "a sink reads one value per piece");
    case proto::ACTOR_KIND_COPY:
      return expect(inputs == 1 && outputs == 1, "a copy reads one value and writes one");
    case proto::ACTOR_KIND_COMPUTE:
    case proto::ACTOR_KIND_BOXING:
      return Status::Ok();
    case proto::ACTOR_KIND_SEND:
    case proto::ACTOR_KIND_RECV:
      return UnimplementedError(label +
                                ": the reference interpreter runs single-node plans and "
                                "does not model send and recv actors");
    default:
      return InvalidArgumentError(label + " has no actor kind");
  }
}

Status PlanRun::PrepareActor(ActorRun* run) {
  const proto::ActorDef& actor = *run->def;
  for (int64_t r : actor.input_register()) {
    int phase = 0;
    for (const proto::RegisterConsumer& c : plan_.register_def(r).consumer()) {
      if (c.actor() == actor.id()) phase = c.phase();
    }
    run->input_phases.push_back(phase);
  }
  switch (actor.kind()) {
    case proto::ACTOR_KIND_SOURCE: {
      SOFTWIRE_ASSIGN_OR_RETURN(run->dataset,
                                data::OpenDataset(actor.source().dataset(), data_root_));
      return Status::Ok();
    }
    case proto::ACTOR_KIND_VARIABLE: {
      // Initial values are float32, as the engine holds them; widened afterwards so the
      // reference starts from the very same weights.
      const proto::TensorDesc& desc = plan_.register_def(actor.output_register(0)).tensor();
      std::vector<float> initial(static_cast<size_t>(ShapeOf(desc).NumElements()));
      const proto::VariableActorDef& variable = actor.variable();
      data::VariablePart part{variable.split_axis(), variable.split_begin(), variable.split_end()};
      Status initialized = data::InitializeVariable(
          variable.initializer(), ShapeOf(variable.logical_tensor()), part, data_root_,
          TensorView{DType::kFloat32, ShapeOf(desc), initial.data()});
      if (!initialized.ok()) {
        return initialized.WithContext("variable '" + variable.variable() + "'");
      }
      run->value = ZeroTensor(desc);
      std::copy(initial.begin(), initial.end(), run->value.values.begin());
      return Status::Ok();
    }
    case proto::ACTOR_KIND_UPDATE: {
      // docs/OPS.md: sgd_update keeps one value per weight element, adam_update two.
      const int64_t elements =
          ShapeOf(plan_.register_def(actor.input_register(1)).tensor()).NumElements();
      const std::string& op = actor.kernel().op_type();
      run->optimizer_state.assign(
          static_cast<size_t>(op == "adam_update" ? 2 * elements : elements), 0.0);
      return Status::Ok();
    }
    case proto::ACTOR_KIND_SINK:
      run->reported.assign(static_cast<size_t>(total_pieces_), 0.0);
      return Status::Ok();
    default:
      return Status::Ok();
  }
}

bool PlanRun::FirstFiringOnly(const proto::ActorDef& actor) {
  for (const proto::Attribute& attribute : actor.kernel().attr()) {
    if (attribute.name() == "first_firing_only") return attribute.bool_();
  }
  return false;
}

int64_t PlanRun::FillOf(const ActorRun& run, int64_t r, int64_t index) const {
  return plan::FillOf(index, run.def->period(), plan_.register_def(r).period());
}

bool PlanRun::CanFire(const ActorRun& run) const {
  const proto::ActorDef& actor = *run.def;
  for (int k = 0; k < actor.input_register_size(); ++k) {
    const int64_t r = actor.input_register(k);
    const int64_t fill = FillOf(run, r, run.next);
    if (!registers_.IsComplete(r, fill)) return false;
    if (run.input_phases[k] == 1 && !registers_.ReadersReleased(r, fill)) return false;
  }
  for (int64_t r : actor.output_register()) {
    const bool begins = plan::BeginsFill(run.next, actor.period(), plan_.register_def(r).period());
    if (begins && !registers_.WriterReleasedBefore(r, FillOf(run, r, run.next))) return false;
  }
  return true;
}

Status PlanRun::Fire(ActorRun* run) {
  const proto::ActorDef& actor = *run->def;
  const int64_t index = run->next;
  // The kernel reads the inputs its KernelDef describes; the rest are ordering inputs
  // (docs/PROTOCOL.md), waited for only and released below.
  std::vector<const ReferenceTensor*> inputs;
  const int kernel_inputs =
      actor.kernel().input_size() > 0 ? actor.kernel().input_size() : actor.input_register_size();
  for (int k = 0; k < kernel_inputs; ++k) {
    const int64_t r = actor.input_register(k);
    inputs.push_back(&registers_.CompleteValue(r, FillOf(*run, r, index)));
  }
  SOFTWIRE_RETURN_IF_ERROR(Work(run, index, inputs).WithContext(plan::ActorLabel(actor.name())));
  std::vector<int64_t> released;
  for (int64_t r : actor.input_register()) {
    if (!plan::EndsFill(index, actor.period(), plan_.register_def(r).period())) continue;
    if (std::find(released.begin(), released.end(), r) != released.end()) continue;
    released.push_back(r);  // An input read twice (mul(x, x)) is released once.
    registers_.Release(r, actor.id(), FillOf(*run, r, index));
  }
  for (int64_t r : actor.output_register()) {
    if (!plan::EndsFill(index, actor.period(), plan_.register_def(r).period())) continue;
    registers_.Complete(r, FillOf(*run, r, index));
  }
  ++run->next;
  return Status::Ok();
}

Status PlanRun::Run() {
  for (int64_t piece = 0; piece < total_pieces_; ++piece) {
    bool progress = true;
    while (progress) {
      progress = false;
      for (int64_t id : order_) {
        ActorRun& run = actors_[id];
        while (run.next < run.firings && run.next * run.def->period() <= piece && CanFire(run)) {
          SOFTWIRE_RETURN_IF_ERROR(Fire(&run));
          progress = true;
        }
      }
    }
  }
  for (const ActorRun& run : actors_) {
    if (run.next < run.firings) {
      return FailedPreconditionError(plan::ActorLabel(run.def->name()) + ": stuck before firing " +
                                     std::to_string(run.next) + " of " +
                                     std::to_string(run.firings) +
                                     ": an input is never complete (the plan has a cycle the "
                                     "reference cannot order)");
    }
  }
  return Status::Ok();
}

Status PlanRun::Work(ActorRun* run, int64_t index,
                     const std::vector<const ReferenceTensor*>& inputs) {
  const proto::ActorDef& actor = *run->def;
  switch (actor.kind()) {
    case proto::ACTOR_KIND_SOURCE:
      return RunSource(run, index);
    case proto::ACTOR_KIND_VARIABLE: {
      // Firing 0 offers the initial value; later ones the value the update left in place.
      const int64_t r = actor.output_register(0);
      registers_.Value(r, FillOf(*run, r, index)) = run->value;
      return Status::Ok();
    }
    case proto::ACTOR_KIND_ACCUMULATE:
      return RunAccumulate(run, index, *inputs[0]);
    case proto::ACTOR_KIND_UPDATE:
      return RunUpdate(run, index, inputs);
    case proto::ACTOR_KIND_SINK:
      if (inputs[0]->values.size() != 1) {
        return InvalidArgumentError("a sink reports a scalar, but its input has shape " +
                                    inputs[0]->shape.ToString());
      }
      run->reported[static_cast<size_t>(index * actor.period())] = inputs[0]->values[0];
      return Status::Ok();
    default:  // compute, and the transfers: copy (copy or slice) and boxing.
      break;
  }
  if (!FirstFiringOnly(actor)) return RunKernel(run, index, inputs);
  // A variable's cast whose update writes the copy (fold_weight_casts): like a variable actor,
  // firing 0 makes the value, later ones offer what the update left in run->value.
  const int64_t r = actor.output_register(0);
  if (index == 0) {
    SOFTWIRE_RETURN_IF_ERROR(RunKernel(run, index, inputs));
    run->value = registers_.Value(r, FillOf(*run, r, index));
    return Status::Ok();
  }
  registers_.Value(r, FillOf(*run, r, index)) = run->value;
  return Status::Ok();
}

Status PlanRun::RunSource(ActorRun* run, int64_t index) {
  const proto::ActorDef& actor = *run->def;
  std::vector<std::vector<float>> floats(actor.output_register_size());
  std::vector<std::vector<int32_t>> ints(actor.output_register_size());
  std::vector<TensorView> views;
  for (int k = 0; k < actor.output_register_size(); ++k) {
    const proto::TensorDesc& desc = plan_.register_def(actor.output_register(k)).tensor();
    const Shape shape = ShapeOf(desc);
    const size_t elements = static_cast<size_t>(shape.NumElements());
    void* data = nullptr;
    if (DTypeOf(desc) == DType::kInt32) {
      ints[k].resize(elements);
      data = ints[k].data();
    } else {
      floats[k].resize(elements);
      data = floats[k].data();
    }
    views.push_back(TensorView{DTypeOf(desc), shape, data});
  }
  SOFTWIRE_RETURN_IF_ERROR(
      run->dataset->Fill(index * actor.period(), plan_.schedule().micro_batch_size(),
                         actor.source().sample_begin(), actor.source().sample_end(), views));
  for (int k = 0; k < actor.output_register_size(); ++k) {
    const int64_t r = actor.output_register(k);
    ReferenceTensor& value = registers_.Value(r, FillOf(*run, r, index));
    value = ZeroTensor(plan_.register_def(r).tensor());
    if (value.dtype == DType::kInt32) {
      std::copy(ints[k].begin(), ints[k].end(), value.values.begin());
    } else {
      std::copy(floats[k].begin(), floats[k].end(), value.values.begin());
    }
  }
  return Status::Ok();
}

Status PlanRun::RunKernel(ActorRun* run, int64_t index,
                          const std::vector<const ReferenceTensor*>& inputs) {
  const proto::ActorDef& actor = *run->def;
  const proto::KernelDef& kernel = actor.kernel();
  if (!kernels_.Contains(kernel.op_type())) {
    return UnimplementedError("the reference interpreter has no kernel for op type '" +
                              kernel.op_type() + "'");
  }
  std::vector<ReferenceTensor> outputs;
  for (int k = 0; k < actor.output_register_size(); ++k) {
    outputs.push_back(ZeroTensor(k < kernel.output_size()
                                     ? kernel.output(k)
                                     : plan_.register_def(actor.output_register(k)).tensor()));
  }
  // A kernel reads an input through its own descriptor where the plan gives one: a view of
  // the register's bytes in another shape (docs/PROTOCOL.md, "Memory").
  std::vector<ReferenceTensor> views(inputs.size());
  std::vector<const ReferenceTensor*> viewed = inputs;
  for (size_t k = 0; k < inputs.size() && kernel.input_size() == static_cast<int>(inputs.size());
       ++k) {
    const Shape shape = ShapeOf(kernel.input(static_cast<int>(k)));
    if (k < static_cast<size_t>(kernel.input_offset_size())) {
      // A range view (plan/input_ranges.h): the elements from the offset on, as many as the
      // kernel reads. Checked here too: the reference does not trust the plan checker.
      const int64_t first = kernel.input_offset(static_cast<int>(k)) / SizeOf(inputs[k]->dtype);
      const int64_t count = shape.NumElements();
      if (first < 0 || first + count > static_cast<int64_t>(inputs[k]->values.size())) {
        return InvalidArgumentError("reads input " + std::to_string(k) + " " +
                                    inputs[k]->shape.ToString() + " from element " +
                                    std::to_string(first) + " as " + shape.ToString());
      }
      views[k].dtype = inputs[k]->dtype;
      views[k].shape = shape;
      views[k].values.assign(inputs[k]->values.begin() + first,
                             inputs[k]->values.begin() + first + count);
      viewed[k] = &views[k];
      continue;
    }
    if (shape == inputs[k]->shape) continue;
    if (shape.NumElements() != inputs[k]->shape.NumElements()) {
      return InvalidArgumentError("reads input " + std::to_string(k) + " " +
                                  inputs[k]->shape.ToString() + " as " + shape.ToString());
    }
    views[k] = *inputs[k];
    views[k].shape = shape;
    viewed[k] = &views[k];
  }
  ReferenceKernelCall call;
  call.def = &kernel;
  call.inputs = viewed;
  call.outputs = &outputs;
  SOFTWIRE_RETURN_IF_ERROR(kernels_.Run(call));
  for (int k = 0; k < actor.output_register_size(); ++k) {
    const int64_t r = actor.output_register(k);
    registers_.Value(r, FillOf(*run, r, index)) = std::move(outputs[k]);
  }
  return Status::Ok();
}

Status PlanRun::RunAccumulate(ActorRun* run, int64_t index, const ReferenceTensor& input) {
  const int64_t r = run->def->output_register(0);
  ReferenceTensor& sum = registers_.Value(r, FillOf(*run, r, index));
  if (plan::BeginsFill(index, run->def->period(), plan_.register_def(r).period())) {
    sum = input;  // The fill begins: sum = x.
    return Status::Ok();
  }
  if (sum.values.size() != input.values.size()) {
    return InvalidArgumentError("accumulates " + input.shape.ToString() + " into " +
                                sum.shape.ToString());
  }
  for (size_t i = 0; i < sum.values.size(); ++i) sum.values[i] += input.values[i];
  return Status::Ok();
}

Status PlanRun::RunUpdate(ActorRun* run, int64_t index,
                          const std::vector<const ReferenceTensor*>& inputs) {
  // The weight is updated in place: the variable actor offers the new value next step.
  ActorRun& variable = actors_[plan_.register_def(run->def->input_register(1)).producer()];
  std::vector<ReferenceTensor> outputs{*inputs[1]};
  ReferenceKernelCall call;
  call.def = &run->def->kernel();
  call.inputs = inputs;
  call.outputs = &outputs;
  call.state = &run->optimizer_state;
  call.step = index + 1;
  std::vector<const ReferenceTensor*> kernel_inputs(inputs.begin(), inputs.begin() + 2);
  call.inputs = kernel_inputs;
  SOFTWIRE_RETURN_IF_ERROR(kernels_.Run(call));
  if (inputs.size() > 2) {
    // The variable's bfloat16 copy, written in place too: the updated weight rounded as the
    // cast rounds it (fold_weight_casts); its cast actor offers it next step.
    ActorRun& cast = actors_[plan_.register_def(run->def->input_register(2)).producer()];
    ReferenceTensor copy = *inputs[2];
    for (size_t i = 0; i < copy.values.size(); ++i) {
      copy.values[i] = RoundToBFloat16(outputs[0].values[i]);
    }
    cast.value = std::move(copy);
  }
  variable.value = std::move(outputs[0]);
  return Status::Ok();
}

ReferenceTensor PlanRun::StitchVariable(const proto::PlanVariable& variable) const {
  ReferenceTensor whole = ZeroTensor(variable.tensor());
  const std::vector<int64_t>& dims = whole.shape.dims();
  for (const proto::VariablePart& part : variable.part()) {
    const ReferenceTensor& value = actors_[plan_.register_def(part.register_id()).producer()].value;
    if (part.split_axis() < 0) {
      whole.values = value.values;
      continue;
    }
    const int axis = part.split_axis();
    const int64_t outer = whole.shape.NumElements(0, axis);
    const int64_t inner = whole.shape.NumElements(axis + 1, whole.shape.rank());
    const int64_t rows = part.split_end() - part.split_begin();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t row = 0; row < rows; ++row) {
        for (int64_t i = 0; i < inner; ++i) {
          whole.values[static_cast<size_t>((o * dims[axis] + part.split_begin() + row) * inner +
                                           i)] =
              value.values[static_cast<size_t>((o * rows + row) * inner + i)];
        }
      }
    }
  }
  return whole;
}

ReferenceResult PlanRun::Result() const {
  ReferenceResult result;
  const int64_t pieces_per_step = plan_.schedule().pieces_per_step();
  for (int64_t s = 0; s < steps_; ++s) {
    ReferenceStep step;
    step.step = s;
    for (const proto::PlanOutput& output : plan_.output()) {
      const std::vector<double>& reported = actors_[output.sink_actor()].reported;
      double sum = 0;
      for (int64_t p = s * pieces_per_step; p < (s + 1) * pieces_per_step; ++p) {
        sum += reported[static_cast<size_t>(p)];
      }
      const double mean = sum / static_cast<double>(pieces_per_step);
      step.outputs[output.name()] = mean;
      if (output.is_loss()) step.loss = mean;
    }
    result.steps.push_back(std::move(step));
  }
  for (const proto::PlanVariable& variable : plan_.variable()) {
    result.variables[variable.name()] = StitchVariable(variable);
  }
  return result;
}

}  // namespace reference
}  // namespace softwire
