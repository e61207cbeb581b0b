#include "plan/actor_kind_rules.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "plan/labels.h"

namespace softwire {
namespace plan {
namespace {

std::string CountRange(int min, int max) {
  if (min == max) return std::to_string(min);
  if (max < 0) return "at least " + std::to_string(min);
  return std::to_string(min) + " to " + std::to_string(max);
}

// One actor under its kind's rules, and the expectations several kinds share. Each fails with
// an Error naming the expectation and what the actor has.
struct KindCheck {
  const proto::Plan& plan;
  const proto::ActorDef& actor;

  // InvalidArgument "actor 'name' (id): <kind> actor <what>".
  Status Error(const std::string& what) const {
    return InvalidArgumentError(ActorLabel(actor) + ": " + ActorKindName(actor.kind()) + " actor " +
                                what);
  }

  int64_t period() const { return actor.period(); }
  int64_t pieces_per_step() const { return plan.schedule().pieces_per_step(); }
  const proto::RegisterDef& input(int index) const {
    return plan.register_def(static_cast<int>(actor.input_register(index)));
  }
  const proto::RegisterDef& output(int index) const {
    return plan.register_def(static_cast<int>(actor.output_register(index)));
  }
  const proto::ActorDef& actor_at(int64_t id) const { return plan.actor(static_cast<int>(id)); }

  // The phase in which this actor consumes `r` (0 when it is not listed, which the plan
  // invariants rule out).
  int PhaseOf(const proto::RegisterDef& r) const {
    for (const proto::RegisterConsumer& consumer : r.consumer()) {
      if (consumer.actor() == actor.id()) return consumer.phase();
    }
    return 0;
  }

  Status ExpectInputs(int min, int max) const {
    const int count = actor.input_register_size();
    if (count >= min && (max < 0 || count <= max)) return Status::Ok();
    return Error("takes " + CountRange(min, max) + " inputs, has " + std::to_string(count));
  }

  Status ExpectOutputs(int min, int max) const {
    const int count = actor.output_register_size();
    if (count >= min && (max < 0 || count <= max)) return Status::Ok();
    return Error("writes " + CountRange(min, max) + " outputs, has " + std::to_string(count));
  }

  Status ExpectPeriod(int64_t expected, const char* meaning) const {
    if (period() == expected) return Status::Ok();
    return Error("has period " + std::to_string(period()) + ", must be " +
                 std::to_string(expected) + " (" + meaning + ")");
  }

  // Every register the actor reads and writes has the actor's own period ("as the value").
  Status ExpectRegistersHaveActorPeriod() const {
    auto check = [&](const proto::RegisterDef& r) {
      if (r.period() == period()) return Status::Ok();
      return Error("moves a value as it is, so " + RegisterLabel(r) + " must have its period " +
                   std::to_string(period()) + ", has " + std::to_string(r.period()));
    };
    for (int i = 0; i < actor.input_register_size(); ++i) {
      SOFTWIRE_RETURN_IF_ERROR(check(input(i)));
    }
    for (int i = 0; i < actor.output_register_size(); ++i) {
      SOFTWIRE_RETURN_IF_ERROR(check(output(i)));
    }
    return Status::Ok();
  }
};

Status CheckSource(const KindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(0, 0));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(1, -1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectPeriod(1, "one piece per firing"));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectRegistersHaveActorPeriod());
  if (!check.actor.has_source()) return check.Error("has no source settings");
  const proto::SourceActorDef& source = check.actor.source();
  if (source.dataset().dataset_case() == proto::DataSource::DATASET_NOT_SET) {
    return check.Error("has no dataset");
  }
  if (source.dataset().output_size() != check.actor.output_register_size()) {
    return check.Error("writes " + std::to_string(check.actor.output_register_size()) +
                       " outputs, but its dataset has " +
                       std::to_string(source.dataset().output_size()));
  }
  if (source.sample_begin() < 0 || source.sample_end() <= source.sample_begin()) {
    return check.Error("has an empty sample slice [" + std::to_string(source.sample_begin()) +
                       ", " + std::to_string(source.sample_end()) + ")");
  }
  return Status::Ok();
}

// A compute kernel overwrites, it never accumulates (that is the accumulate kind), so its
// outputs have its period; its inputs may be longer: a per-piece matmul reads a per-step weight.
Status CheckCompute(const KindCheck& check) {
  if (check.actor.kernel().op_type().empty()) return check.Error("has no op type");
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(1, -1));
  if (check.period() != 1 && check.period() != check.pieces_per_step()) {
    return check.Error("has period " + std::to_string(check.period()) +
                       ", must be 1 or pieces_per_step " + std::to_string(check.pieces_per_step()));
  }
  for (int i = 0; i < check.actor.output_register_size(); ++i) {
    const proto::RegisterDef& output = check.output(i);
    if (output.period() != check.period()) {
      return check.Error("writes " + RegisterLabel(output) + " with period " +
                         std::to_string(output.period()) + ", must be its own period " +
                         std::to_string(check.period()) +
                         " (only accumulate actors write longer fills)");
    }
  }
  return Status::Ok();
}

// The update actor changes the value in place, so the variable's register has one slot.
Status CheckVariable(const KindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(0, 0));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectPeriod(check.pieces_per_step(), "one step per firing"));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectRegistersHaveActorPeriod());
  const proto::RegisterDef& value = check.output(0);
  if (value.slots() != 1) {
    return check.Error("holds one value updated in place, so " + RegisterLabel(value) +
                       " must have 1 slot, has " + std::to_string(value.slots()));
  }
  if (check.actor.variable().variable().empty()) return check.Error("names no variable");
  return Status::Ok();
}

Status CheckAccumulate(const KindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectPeriod(1, "one piece per firing"));
  const proto::RegisterDef& input = check.input(0);
  if (input.period() != 1) {
    return check.Error("sums a per-piece value, but " + RegisterLabel(input) + " has period " +
                       std::to_string(input.period()));
  }
  const proto::RegisterDef& sum = check.output(0);
  if (sum.period() != check.pieces_per_step()) {
    return check.Error("writes a per-step sum, so " + RegisterLabel(sum) + " must have period " +
                       std::to_string(check.pieces_per_step()) + ", has " +
                       std::to_string(sum.period()));
  }
  return Status::Ok();
}

// Input 0 is the accumulated gradient (phase 0); input 1 the variable's register, of which the
// update actor is the phase-1 consumer: it gets Ready only after every reader of the step
// released it.
// An update's third input (fold_weight_casts, docs/PRECISION.md): the bfloat16 copy of its
// variable, written in place too, so read in phase 1, made on the first step by a
// `first_firing_only` cast of that very variable register.
Status CheckUpdateCopy(const KindCheck& check) {
  const proto::RegisterDef& variable = check.input(1);
  const proto::RegisterDef& copy = check.input(2);
  if (check.PhaseOf(copy) != 1) {
    return check.Error("writes the bfloat16 copy " + RegisterLabel(copy) +
                       " in place, so it must be its phase-1 consumer");
  }
  if (copy.tensor().dtype() != proto::DATA_TYPE_BFLOAT16 ||
      copy.tensor().dims_size() != variable.tensor().dims_size() ||
      !std::equal(copy.tensor().dims().begin(), copy.tensor().dims().end(),
                  variable.tensor().dims().begin())) {
    return check.Error("writes " + RegisterLabel(copy) + " as the bfloat16 copy of " +
                       RegisterLabel(variable) + ", but it is not bfloat16 of the same dims");
  }
  const proto::ActorDef& cast = check.actor_at(copy.producer());
  bool first_firing_only = false;
  for (const proto::Attribute& attribute : cast.kernel().attr()) {
    if (attribute.name() == "first_firing_only") first_firing_only = attribute.bool_();
  }
  if (cast.kernel().op_type() != "cast" || !first_firing_only || cast.input_register_size() != 1 ||
      cast.input_register(0) != variable.id()) {
    return check.Error("writes " + RegisterLabel(copy) + ", which " + cast.name() +
                       " must make as a first_firing_only cast of " + RegisterLabel(variable));
  }
  return Status::Ok();
}

Status CheckUpdate(const KindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(2, 3));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(0, 0));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectPeriod(check.pieces_per_step(), "one step per firing"));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectRegistersHaveActorPeriod());
  const proto::RegisterDef& gradient = check.input(0);
  const proto::RegisterDef& variable = check.input(1);
  if (gradient.id() == variable.id()) {
    return check.Error("reads the same register as gradient and variable");
  }
  if (check.PhaseOf(gradient) != 0) {
    return check.Error("must read its gradient " + RegisterLabel(gradient) + " in phase 0");
  }
  if (check.PhaseOf(variable) != 1) {
    return check.Error("writes its variable in place, so it must be the phase-1 consumer of " +
                       RegisterLabel(variable));
  }
  const proto::ActorDef& producer = check.actor_at(variable.producer());
  if (producer.kind() != proto::ACTOR_KIND_VARIABLE) {
    return check.Error("updates " + RegisterLabel(variable) + ", which is written by " +
                       producer.name() + ", not by a variable actor");
  }
  // running_average_update (batch_norm's running statistics) folds a statistic, no optimizer.
  if (check.actor.update().optimizer().kind_case() == proto::Optimizer::KIND_NOT_SET &&
      check.actor.kernel().op_type() != "running_average_update") {
    return check.Error("has no optimizer");
  }
  if (check.actor.input_register_size() == 3) return CheckUpdateCopy(check);
  return Status::Ok();
}

Status CheckSink(const KindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(0, 0));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectPeriod(1, "one value per piece"));
  const proto::TensorDesc& value = check.input(0).tensor();
  int64_t elements = 1;
  for (int64_t dim : value.dims()) elements *= dim;
  if (value.dtype() != proto::DATA_TYPE_FLOAT32 || elements != 1) {
    return check.Error("reports a float32 scalar, but " + RegisterLabel(check.input(0)) +
                       " holds something else");
  }
  if (check.actor.sink().output().empty()) return check.Error("names no output");
  return Status::Ok();
}

// A copy runs `copy` (byte for byte) or, where only a block of the value is wanted on the other
// side, `slice` (docs/PARALLELISM.md, "Boxing"): its output is a block of its input, of the same
// dtype and rank and no larger extent.
Status CheckCopy(const KindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectRegistersHaveActorPeriod());
  // What the kernel reads: the register, or a range of it (plan/input_ranges.h).
  const proto::TensorDesc& from = check.actor.kernel().input_offset_size() > 0
                                      ? check.actor.kernel().input(0)
                                      : check.input(0).tensor();
  const proto::TensorDesc& to = check.output(0).tensor();
  if (check.actor.kernel().op_type() == "slice") {
    bool block = from.dtype() == to.dtype() && from.dims_size() == to.dims_size() &&
                 from.layout() == proto::LAYOUT_PLAIN && to.layout() == proto::LAYOUT_PLAIN;
    for (int axis = 0; block && axis < from.dims_size(); ++axis) {
      block = to.dims(axis) <= from.dims(axis);
    }
    if (block) return Status::Ok();
    return check.Error("slices, so " + RegisterLabel(check.output(0)) + " must hold a block of " +
                       RegisterLabel(check.input(0)) + " (same dtype and rank, no larger extent)");
  }
  if (from.dtype() != to.dtype() || from.layout() != to.layout() ||
      !std::equal(from.dims().begin(), from.dims().end(), to.dims().begin(), to.dims().end())) {
    return check.Error("copies bytes, so " + RegisterLabel(check.input(0)) + " and " +
                       RegisterLabel(check.output(0)) + " must hold the same tensor");
  }
  return Status::Ok();
}

// A send's optional output stands for the bytes in flight, read by the matching recv.
Status CheckSend(const KindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(0, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectRegistersHaveActorPeriod());
  for (int i = 0; i < check.actor.output_register_size(); ++i) {
    for (const proto::RegisterConsumer& consumer : check.output(i).consumer()) {
      const proto::ActorDef& reader = check.actor_at(consumer.actor());
      if (reader.kind() != proto::ACTOR_KIND_RECV) {
        return check.Error("hands " + RegisterLabel(check.output(i)) +
                           " only to recv actors, but " + reader.name() + " reads it");
      }
    }
  }
  return Status::Ok();
}

Status CheckRecv(const KindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(0, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectRegistersHaveActorPeriod());
  for (int i = 0; i < check.actor.input_register_size(); ++i) {
    const proto::ActorDef& writer = check.actor_at(check.input(i).producer());
    if (writer.kind() != proto::ACTOR_KIND_SEND) {
      return check.Error("reads " + RegisterLabel(check.input(i)) +
                         " only from a send actor, but " + writer.name() + " writes it");
    }
  }
  return Status::Ok();
}

// A boxing actor takes any number of inputs: usually one or more; none for the `fill` that
// makes a zero part where a partial-sum destination has no source block (it then fires once
// per period, paced by its output slots).
Status CheckBoxing(const KindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(1, -1));
  return check.ExpectRegistersHaveActorPeriod();
}

// Several firings in flight need a kernel that a device queue runs in launch order and no
// state carried from one firing to the next on the host (docs/PROTOCOL.md); a send's transfers
// go out on one stream in launch order (runtime/host/wire_transport.h).
Status CheckMaxInFlight(const KindCheck& check) {
  const int32_t max_in_flight = check.actor.max_in_flight();
  if (max_in_flight < 0) {
    return check.Error("has max_in_flight " + std::to_string(max_in_flight) +
                       ", must be at least 1 (0: unset, meaning 1)");
  }
  if (max_in_flight <= 1) return Status::Ok();
  const proto::ActorKind kind = check.actor.kind();
  if (kind == proto::ACTOR_KIND_COMPUTE || kind == proto::ACTOR_KIND_COPY ||
      kind == proto::ACTOR_KIND_SEND) {
    return Status::Ok();
  }
  return check.Error(
      "has max_in_flight " + std::to_string(max_in_flight) +
      ", but only compute, copy and send actors may have more than one firing in flight");
}

}  // namespace

Status CheckActorKindRules(const proto::Plan& plan) {
  for (const proto::ActorDef& actor : plan.actor()) {
    SOFTWIRE_RETURN_IF_ERROR(CheckActorKind(plan, actor));
  }
  return CheckOutputsAndVariables(plan);
}

int32_t MaxInFlight(const proto::ActorDef& actor) {
  return actor.max_in_flight() > 1 ? actor.max_in_flight() : 1;
}

Status CheckActorKind(const proto::Plan& plan, const proto::ActorDef& actor) {
  const KindCheck check{plan, actor};
  if (actor.kind() != proto::ACTOR_KIND_UNSPECIFIED) {
    SOFTWIRE_RETURN_IF_ERROR(CheckMaxInFlight(check));
  }
  switch (actor.kind()) {
    case proto::ACTOR_KIND_SOURCE:
      return CheckSource(check);
    case proto::ACTOR_KIND_COMPUTE:
      return CheckCompute(check);
    case proto::ACTOR_KIND_VARIABLE:
      return CheckVariable(check);
    case proto::ACTOR_KIND_ACCUMULATE:
      return CheckAccumulate(check);
    case proto::ACTOR_KIND_UPDATE:
      return CheckUpdate(check);
    case proto::ACTOR_KIND_SINK:
      return CheckSink(check);
    case proto::ACTOR_KIND_COPY:
      return CheckCopy(check);
    case proto::ACTOR_KIND_SEND:
      return CheckSend(check);
    case proto::ACTOR_KIND_RECV:
      return CheckRecv(check);
    case proto::ACTOR_KIND_BOXING:
      return CheckBoxing(check);
    case proto::ACTOR_KIND_UNSPECIFIED:
      return InvalidArgumentError(ActorLabel(actor) + ": has no kind");
    default:
      break;
  }
  return InvalidArgumentError(ActorLabel(actor) + ": kind " + std::to_string(actor.kind()) +
                              " is not an actor kind");
}

Status CheckOutputsAndVariables(const proto::Plan& plan) {
  for (const proto::PlanOutput& output : plan.output()) {
    const proto::ActorDef& sink = plan.actor(static_cast<int>(output.sink_actor()));
    if (sink.kind() != proto::ACTOR_KIND_SINK || sink.sink().output() != output.name()) {
      return InvalidArgumentError("output '" + output.name() + "': " + ActorLabel(sink) +
                                  " is not a sink reporting it");
    }
  }
  for (const proto::PlanVariable& variable : plan.variable()) {
    for (const proto::VariablePart& part : variable.part()) {
      const proto::RegisterDef& r = plan.register_def(static_cast<int>(part.register_id()));
      if (plan.actor(static_cast<int>(r.producer())).kind() != proto::ACTOR_KIND_VARIABLE) {
        return InvalidArgumentError("variable '" + variable.name() + "': part " + RegisterLabel(r) +
                                    " is not written by a variable actor");
      }
    }
  }
  return Status::Ok();
}

}  // namespace plan
}  // namespace softwire
