// The ops only the compiler creates, one per non-compute actor kind of docs/PROTOCOL.md:
// source, variable, accumulate, sink. (The update kinds live in optimizer_ops.cc.)
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

// Sources and variables produce what the job declared; build_graph set those types.
Status InferDeclaredOutputs(InferenceContext& context) {
  for (int i = 0; i < context.output_count(); ++i) {
    const TensorType& declared = context.declared_output(i);
    if (!declared.known()) {
      return InvalidArgumentError("output " + std::to_string(i) + " has no declared type");
    }
    context.SetOutput(i, declared);
  }
  return Status::Ok();
}

Status InferAccumulate(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  context.SetOutput(0, context.input(0));
  return Status::Ok();
}

Status InferSink(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  return context.RequireRank(0, 0);
}

OpDefinition ActorKindOp(const std::string& type, proto::ActorKind kind) {
  OpDefinition definition;
  definition.type = type;
  definition.usage = OpUsage::kActorKind;
  definition.actor_kind = kind;
  return definition;
}

}  // namespace

void AddActorKindOps(OpRegistry& registry) {
  OpDefinition source = ActorKindOp("source", proto::ACTOR_KIND_SOURCE);
  source.variadic_outputs = true;
  source.infer = InferDeclaredOutputs;
  source.period_rule = PeriodRule::kPerPiece;
  source.cost = [](const OpSignature& signature) { return OpCost{0, TouchedBytes(signature)}; };
  registry.Add(source);

  // Only the first firing writes (the initial value); later firings cost nothing.
  OpDefinition variable = ActorKindOp("variable", proto::ACTOR_KIND_VARIABLE);
  variable.output_names = {"value"};
  variable.infer = InferDeclaredOutputs;
  variable.period_rule = PeriodRule::kPerStep;
  variable.cost = [](const OpSignature&) { return OpCost{}; };
  registry.Add(variable);

  OpDefinition accumulate = ActorKindOp("accumulate", proto::ACTOR_KIND_ACCUMULATE);
  accumulate.input_names = {"x"};
  accumulate.output_names = {"sum"};
  accumulate.infer = InferAccumulate;
  accumulate.period_rule = PeriodRule::kAccumulate;
  accumulate.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 1); };
  // Summing parts or partial terms over pieces keeps their layout.
  accumulate.sbp_signatures = [](const OpSignature& op) {
    std::vector<SbpSignature> signatures = BroadcastingSplits(op);
    signatures.push_back(AllPartial(1, 1));
    return signatures;
  };
  registry.Add(accumulate);

  OpDefinition sink = ActorKindOp("sink", proto::ACTOR_KIND_SINK);
  sink.input_names = {"value"};
  sink.infer = InferSink;
  sink.period_rule = PeriodRule::kPerPiece;
  sink.cost = [](const OpSignature& signature) { return OpCost{0, TouchedBytes(signature)}; };
  registry.Add(sink);
}

}  // namespace compiler
}  // namespace softwire
