// DumpPlan (compiler.h): the whole plan as stable text for golden tests. One block per device
// and per actor (with the registers it writes), in id order; floats with fixed precision;
// nested settings in protobuf's single-line text format.
#include <google/protobuf/text_format.h>

#include <cstdio>
#include <string>

#include "compiler/compiler.h"
#include "compiler/ir/attribute_map.h"
#include "compiler/ir/graph_text.h"
#include "compiler/ir/tensor_type.h"
#include "plan/input_ranges.h"
#include "plan/labels.h"
#include "plan/ordering_inputs.h"
#include "plan/register_lifetimes.h"

namespace softwire {
namespace compiler {
namespace {

std::string SingleLine(const google::protobuf::Message& message) {
  google::protobuf::TextFormat::Printer printer;
  printer.SetSingleLineMode(true);
  std::string text;
  printer.PrintToString(message, &text);
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::string Seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g", seconds);
  return text;
}

std::string Type(const proto::TensorDesc& desc) {
  return FromTensorDesc(desc).ToString();
}

std::string DeviceBlock(const proto::Plan& plan, const proto::PlanDevice& device) {
  return "device " + std::to_string(device.id()) + " " + device.node() + "/" + device.name() + " " +
         plan::DeviceKindName(device.kind()) + " cores " + std::to_string(device.cores()) +
         " budget " + std::to_string(device.memory_budget()) + "\n  planned " +
         std::to_string(device.planned_bytes()) + " = registers " +
         std::to_string(device.register_bytes()) + " (without reuse " +
         std::to_string(plan::RegisterBytesWithoutSharing(plan, device.id())) + ") + workspaces " +
         std::to_string(device.workspace_bytes()) + " + state " +
         std::to_string(device.state_bytes()) + "\n";
}

std::string KernelLine(const proto::KernelDef& kernel) {
  AttributeMap attributes;
  for (const proto::Attribute& attribute : kernel.attr()) {
    StatusOr<AttributeValue> value = AttributeValueFromProto(attribute);
    if (value.ok()) attributes.Set(attribute.name(), *value);
  }
  std::string line = "  kernel " + kernel.op_type() + " " + attributes.ToString() + " (";
  for (int i = 0; i < kernel.input_size(); ++i) line += (i ? ", " : "") + Type(kernel.input(i));
  line += ") -> (";
  for (int i = 0; i < kernel.output_size(); ++i) line += (i ? ", " : "") + Type(kernel.output(i));
  return line + ")\n";
}

std::string InputLines(const proto::Plan& plan, const proto::ActorDef& actor) {
  std::string text;
  for (int k = 0; k < actor.input_register_size(); ++k) {
    const int64_t id = actor.input_register(k);
    const proto::RegisterDef& reg = plan.register_def(id);
    int phase = 0;
    for (const proto::RegisterConsumer& consumer : reg.consumer()) {
      if (consumer.actor() == actor.id()) phase = consumer.phase();
    }
    text += "  in register " + std::to_string(id) + " '" + reg.name() + "' from '" +
            plan.actor(reg.producer()).name() + "' phase " + std::to_string(phase);
    // A view (docs/PROTOCOL.md, "Views"): the kernel reads the register's bytes reshaped.
    if (k < actor.kernel().input_size() && Type(actor.kernel().input(k)) != Type(reg.tensor())) {
      text += " viewed as " + Type(actor.kernel().input(k));
    }
    // A range view (plan/input_ranges.h): the kernel reads from this byte of the slot on.
    if (k < actor.kernel().input_offset_size() && plan::IsRangeInput(plan, actor, k)) {
      text += " from byte " + std::to_string(actor.kernel().input_offset(k));
    }
    // An ordering input (plan/ordering_inputs.h): waited for, never read by the kernel.
    if (plan::IsOrderingInput(actor, k)) text += " ordering only";
    text += "\n";
  }
  return text;
}

std::string OutputLines(const proto::Plan& plan, const proto::ActorDef& actor) {
  std::string text;
  for (int64_t id : actor.output_register()) {
    const proto::RegisterDef& reg = plan.register_def(id);
    text += "  out register " + std::to_string(id) + " '" + reg.name() + "' " + Type(reg.tensor()) +
            " device " + std::to_string(reg.device()) + " slots " + std::to_string(reg.slots()) +
            " x " + std::to_string(reg.bytes_per_slot()) + " B at " + std::to_string(reg.offset()) +
            " period " + std::to_string(reg.period()) + " consumers [";
    for (int i = 0; i < reg.consumer_size(); ++i) {
      const proto::RegisterConsumer& consumer = reg.consumer(i);
      text += (i ? ", " : "") + std::to_string(consumer.actor()) + " '" +
              plan.actor(consumer.actor()).name() + "'";
      if (consumer.phase() != 0) text += " phase " + std::to_string(consumer.phase());
    }
    text += "]";
    for (int i = 0; i < reg.shares_bytes_with_size(); ++i) {
      text += (i ? ", " : " shares bytes with ") + std::to_string(reg.shares_bytes_with(i));
    }
    // In-place ops (docs/PROTOCOL.md): laid out exactly over an input this actor writes over.
    for (int64_t other : reg.shares_bytes_with()) {
      const proto::RegisterDef& input = plan.register_def(static_cast<int>(other));
      if (input.offset() == reg.offset() && input.slots() == reg.slots() &&
          input.bytes_per_slot() == reg.bytes_per_slot() &&
          plan::KernelMayWriteOver(plan, actor, other, reg.id())) {
        text += ", in place over " + std::to_string(other) + " '" + input.name() + "'";
      }
    }
    text += "\n";
  }
  return text;
}

// The kind-specific settings; an actor has at most one.
std::string SettingsLine(const proto::ActorDef& actor) {
  const google::protobuf::Message* settings = nullptr;
  if (actor.has_source()) settings = &actor.source();
  if (actor.has_variable()) settings = &actor.variable();
  if (actor.has_update()) settings = &actor.update();
  if (actor.has_sink()) settings = &actor.sink();
  return settings == nullptr ? "" : "  settings " + SingleLine(*settings) + "\n";
}

std::string ActorBlock(const proto::Plan& plan, const proto::ActorDef& actor) {
  std::string text =
      "actor " + std::to_string(actor.id()) + " '" + actor.name() + "' " +
      plan::ActorKindName(actor.kind()) + " device " + std::to_string(actor.device()) + " queue " +
      std::to_string(actor.queue()) + " stage " + std::to_string(actor.stage()) + " period " +
      std::to_string(actor.period()) + " firings " + std::to_string(actor.firings()) +
      " estimated " + Seconds(actor.estimated_seconds()) + " s\n";
  // Shown unless the name says it: "fc1" or "fc1@2" for op 'fc1'; inserted transfers have none.
  const std::string& op = actor.logical_op();
  if (!op.empty() && op != actor.name() && actor.name().rfind(op + "@", 0) != 0) {
    text += "  logical_op '" + op + "'\n";
  }
  text += KernelLine(actor.kernel());
  text += InputLines(plan, actor);
  text += OutputLines(plan, actor);
  if (actor.workspace_bytes() > 0) {
    text += "  workspace " + std::to_string(actor.workspace_bytes()) + " B at " +
            std::to_string(actor.workspace_offset()) + "\n";
  }
  if (actor.state_bytes() > 0) {
    text += "  state " + std::to_string(actor.state_bytes()) + " B at " +
            std::to_string(actor.state_offset()) + "\n";
  }
  return text + SettingsLine(actor);
}

}  // namespace

std::string DumpPlan(const proto::Plan& plan) {
  const proto::Schedule& schedule = plan.schedule();
  std::string text = "plan '" + plan.job_name() + "'\nschedule steps " +
                     std::to_string(schedule.steps()) + " pieces_per_step " +
                     std::to_string(schedule.pieces_per_step()) + " micro_batch_size " +
                     std::to_string(schedule.micro_batch_size()) + "\n";
  for (const proto::PlanDevice& device : plan.device()) text += "\n" + DeviceBlock(plan, device);
  for (const proto::ActorDef& actor : plan.actor()) text += "\n" + ActorBlock(plan, actor);
  text += "\n";
  for (const proto::PlanOutput& output : plan.output()) {
    text += "output '" + output.name() + "'" + (output.is_loss() ? " loss" : "") + " <- actor " +
            std::to_string(output.sink_actor()) + "\n";
  }
  for (const proto::PlanVariable& variable : plan.variable()) {
    text += "variable '" + variable.name() + "' " + Type(variable.tensor()) + " parts";
    for (const proto::VariablePart& part : variable.part()) {
      text += " [register " + std::to_string(part.register_id()) + " axis " +
              std::to_string(part.split_axis()) + " " + std::to_string(part.split_begin()) + ".." +
              std::to_string(part.split_end()) + "]";
    }
    text += "\n";
  }
  return text;
}

}  // namespace compiler
}  // namespace softwire
