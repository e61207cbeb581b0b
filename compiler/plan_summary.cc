// SummarizePlan (compiler.h): what `softwire compile JOB` prints.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/format_bytes.h"
#include "compiler/compiler.h"
#include "compiler/ir/graph_text.h"
#include "plan/labels.h"
#include "plan/memory_breakdown.h"
#include "plan/register_lifetimes.h"
#include "proto/fused_program.h"

namespace softwire {
namespace compiler {
namespace {

std::string Pad(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string DeviceName(const proto::Plan& plan, int device) {
  if (device < 0 || device >= plan.device_size()) return "?";
  return plan.device(device).node() + "/" + plan.device(device).name();
}

std::string ScheduleLine(const proto::Plan& plan) {
  const proto::Schedule& schedule = plan.schedule();
  return "plan '" + plan.job_name() + "': " + std::to_string(schedule.steps()) + " steps x " +
         std::to_string(schedule.pieces_per_step()) + " pieces of " +
         std::to_string(schedule.micro_batch_size()) + " samples (" +
         std::to_string(schedule.steps() * schedule.pieces_per_step()) + " pieces)\n";
}

std::string DeviceLines(const proto::Plan& plan) {
  std::string text = "devices:\n";
  for (const proto::PlanDevice& device : plan.device()) {
    text += "  " + DeviceName(plan, device.id()) + " (" + plan::DeviceKindName(device.kind()) +
            ", " + std::to_string(device.cores()) + " cores): planned " +
            FormatBytes(device.planned_bytes()) + " = registers " +
            FormatBytes(device.register_bytes()) + " (reuse saved " +
            FormatBytes(plan::RegisterBytesWithoutSharing(plan, device.id()) -
                        device.register_bytes()) +
            ") + workspaces " + FormatBytes(device.workspace_bytes()) + " + state " +
            FormatBytes(device.state_bytes()) + "; budget " +
            (device.memory_budget() == 0 ? std::string("unlimited")
                                         : FormatBytes(device.memory_budget())) +
            "\n    holds " +
            plan::DescribeMemoryBreakdown(plan::BreakDownMemory(plan, device.id())) + "\n";
  }
  return text;
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[(c >> 4) & 0xf];
      out += kHex[c & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JsonFields(const std::vector<std::pair<std::string, int64_t>>& fields) {
  std::string text = "{";
  for (size_t i = 0; i < fields.size(); ++i) {
    text += (i == 0 ? "" : ", ") + JsonString(fields[i].first) + ": " +
            std::to_string(fields[i].second);
  }
  return text + "}";
}

std::string DeviceJson(const proto::Plan& plan, const proto::PlanDevice& device) {
  const plan::MemoryBreakdown b = plan::BreakDownMemory(plan, device.id());
  return "{\"id\": " + std::to_string(device.id()) +
         ", \"device\": " + JsonString(DeviceName(plan, device.id())) +
         ", \"kind\": " + JsonString(plan::DeviceKindName(device.kind())) +
         ", \"planned_bytes\": " + std::to_string(device.planned_bytes()) +
         ", \"register_bytes\": " + std::to_string(device.register_bytes()) +
         ", \"workspace_bytes\": " + std::to_string(device.workspace_bytes()) +
         ", \"state_bytes\": " + std::to_string(device.state_bytes()) +
         ", \"memory_budget\": " + std::to_string(device.memory_budget()) + ",\n    \"split\": " +
         JsonFields({{"weights", b.weights},
                     {"gradients", b.gradients},
                     {"optimizer_state", b.optimizer_state},
                     {"kept_activations", b.kept_activations},
                     {"transient", b.transient},
                     {"transfer", b.transfer},
                     {"workspaces", b.workspaces},
                     {"other_state", b.other_state},
                     {"padding", b.padding}}) +
         ",\n    \"unshared\": " +
         JsonFields({{"weights", b.unshared_weights},
                     {"gradients", b.unshared_gradients},
                     {"kept_activations", b.unshared_kept_activations},
                     {"transient", b.unshared_transient},
                     {"transfer", b.unshared_transfer}}) +
         ",\n    \"saved\": " +
         JsonFields({{"views", b.saved_by_views},
                     {"reuse", b.saved_by_reuse},
                     {"in_place", b.saved_by_in_place}}) +
         "}";
}

std::string KindCounts(const proto::Plan& plan) {
  std::map<int, int> counts;
  for (const proto::ActorDef& actor : plan.actor()) ++counts[actor.kind()];
  std::string text = "actors: " + std::to_string(plan.actor_size()) + " (";
  bool first = true;
  for (const auto& [kind, count] : counts) {
    text += std::string(first ? "" : ", ") +
            plan::ActorKindName(static_cast<proto::ActorKind>(kind)) + " " + std::to_string(count);
    first = false;
  }
  return text + ")\n";
}

// The program of a fused actor (docs/OPS.md "fused"); nothing for other actors.
std::optional<FusedProgram> FusedProgramOf(const proto::ActorDef& actor) {
  if (actor.kernel().op_type() != "fused") return std::nullopt;
  for (const proto::Attribute& attribute : actor.kernel().attr()) {
    if (attribute.name() != "program") continue;
    StatusOr<FusedProgram> program = ParseFusedProgram(attribute.string());
    if (program.ok()) return *program;
  }
  return std::nullopt;
}

// "fusion: 6 fused actors hold 14 element-wise ops; 4 products run theirs in their epilogues"
// when the plan has any (the second part when a product does).
std::string FusionLine(const proto::Plan& plan) {
  int actors = 0;
  int products = 0;
  size_t ops = 0;
  for (const proto::ActorDef& actor : plan.actor()) {
    const std::optional<FusedProgram> program = FusedProgramOf(actor);
    if (!program) continue;
    ++actors;
    products += program->HasProduct() ? 1 : 0;
    ops += program->steps.size() - (program->HasProduct() ? 1 : 0);
  }
  if (actors == 0) return "";
  std::string line = "fusion: " + std::to_string(actors) +
                     (actors == 1 ? " fused actor holds " : " fused actors hold ") +
                     std::to_string(ops) + " element-wise ops";
  if (products == 1) line += "; 1 product runs its chain in its epilogue";
  if (products > 1) {
    line += "; " + std::to_string(products) + " products run theirs in their epilogues";
  }
  return line + "\n";
}

// "  (fused: bias_add+relu)" after a fused actor's registers.
std::string FusedOps(const proto::ActorDef& actor) {
  const std::optional<FusedProgram> program = FusedProgramOf(actor);
  return program ? "  (fused: " + FusedOpsLabel(*program) + ")" : "";
}

std::string RegistersWritten(const proto::Plan& plan, const proto::ActorDef& actor) {
  std::string text;
  for (int64_t id : actor.output_register()) {
    const proto::RegisterDef& reg = plan.register_def(id);
    // Only bfloat16 is marked: float32 and int32 read as they always have.
    const bool bf16 = reg.tensor().dtype() == proto::DATA_TYPE_BFLOAT16;
    text += (text.empty() ? "" : ", ") + reg.name() + (bf16 ? " [bf16] " : " ") +
            std::to_string(reg.slots()) + " x " + FormatBytes(reg.bytes_per_slot());
  }
  return text.empty() ? "-" : text;
}

// Under bf16: the policy, why, and what it made: "precision: bf16 (--precision bf16): products
// read bfloat16 copies ...; casts: 3 of variables (once per step), 6 of activations ...".
// A float32 plan: "precision: float32 (auto: this cpu lacks ...)" when chosen, else nothing.
std::string PrecisionLine(const proto::Plan& plan) {
  if (plan.precision() != proto::PRECISION_BF16) {
    // A float32 plan says so only when someone chose it (a flag, the job, auto), so the
    // summaries of plain float32 jobs read as they always have.
    const std::string& reason = plan.precision_reason();
    if (reason.empty() || reason == "the default") return "";
    return "precision: float32 (" + reason + ")\n";
  }
  int per_step = 0;
  int folded = 0;  // Variables' casts whose later steps their updates write.
  int per_piece = 0;
  int64_t bf16_bytes = 0;
  int activations =
      0;  // Actors other than casts that write bf16: activations between convolutions.
  for (const proto::ActorDef& actor : plan.actor()) {
    static const std::set<std::string> between = {
        "conv2d", "conv2d_grad_input", "batch_norm", "batch_norm_grad",
        "relu",   "relu_grad",         "add",        "add_n"};
    if (between.count(actor.kernel().op_type()) > 0 &&
        actor.kernel().output(0).dtype() == proto::DATA_TYPE_BFLOAT16) {
      ++activations;
    }
    // A fused actor's casts are casts of activations and gradients too (a variable's cast reads
    // the variable alone, so it stays an actor of its own).
    const std::optional<FusedProgram> program = FusedProgramOf(actor);
    if (program) {
      for (const FusedStep& step : program->steps) per_piece += step.op == FusedOp::kCast;
    }
    if (actor.kernel().op_type() != "cast") continue;
    const bool of_variable =
        actor.input_register_size() == 1 &&
        plan.actor(plan.register_def(actor.input_register(0)).producer()).kind() ==
            proto::ACTOR_KIND_VARIABLE;
    (of_variable ? per_step : per_piece) += 1;
    for (const proto::Attribute& attribute : actor.kernel().attr()) {
      folded += attribute.name() == "first_firing_only" && attribute.bool_();
    }
  }
  for (const proto::RegisterDef& reg : plan.register_def()) {
    if (reg.tensor().dtype() == proto::DATA_TYPE_BFLOAT16) {
      bf16_bytes += reg.slots() * reg.bytes_per_slot();
    }
  }
  return "precision: bf16 (" + plan.precision_reason() +
         "): products read bfloat16 copies and accumulate in float32; casts: " +
         std::to_string(per_step) + " of variables (once per step" +
         (folded > 0 ? "; " + std::to_string(folded) +
                           " on the first step only, later steps' copies written by the "
                           "optimizer updates"
                     : "") +
         "), " + std::to_string(per_piece) + " of activations and gradients; bfloat16 registers " +
         FormatBytes(bf16_bytes) +
         (activations > 0 ? "; " + std::to_string(activations) +
                                " ops write bf16 activations between convolutions; weight "
                                "gradients, optimizer and everything else float32\n"
                          : "; variables, optimizer and everything else float32\n");
}

std::string ActorTable(const proto::Plan& plan) {
  size_t name_width = 4;
  size_t device_width = 6;
  for (const proto::ActorDef& actor : plan.actor()) {
    name_width = std::max(name_width, actor.name().size());
    device_width = std::max(device_width, DeviceName(plan, actor.device()).size());
  }
  const size_t id_width = std::max<size_t>(2, std::to_string(plan.actor_size()).size());
  std::string text = "  " + Pad("id", id_width) + "  " + Pad("name", name_width) + "  " +
                     Pad("kind", 10) + "  " + Pad("device", device_width) +
                     "  registers written (slots x bytes)\n";
  for (const proto::ActorDef& actor : plan.actor()) {
    std::string id = std::to_string(actor.id());
    text += "  " + std::string(id_width - id.size(), ' ') + id + "  " +
            Pad(actor.name(), name_width) + "  " + Pad(plan::ActorKindName(actor.kind()), 10) +
            "  " + Pad(DeviceName(plan, actor.device()), device_width) + "  " +
            RegistersWritten(plan, actor) + FusedOps(actor) + "\n";
  }
  return text;
}

}  // namespace

std::string SummarizePlan(const proto::Plan& plan) {
  return ScheduleLine(plan) + PrecisionLine(plan) + DeviceLines(plan) + KindCounts(plan) +
         FusionLine(plan) + ActorTable(plan);
}

std::string SummarizePlanJson(const proto::Plan& plan) {
  const proto::Schedule& schedule = plan.schedule();
  std::map<std::string, int64_t> kinds;
  for (const proto::ActorDef& actor : plan.actor()) ++kinds[plan::ActorKindName(actor.kind())];
  std::vector<std::pair<std::string, int64_t>> by_kind(kinds.begin(), kinds.end());
  std::string devices;
  for (const proto::PlanDevice& device : plan.device()) {
    devices += (devices.empty() ? "\n  " : ",\n  ") + DeviceJson(plan, device);
  }
  return "{\"job\": " + JsonString(plan.job_name()) +
         ", \"steps\": " + std::to_string(schedule.steps()) +
         ", \"pieces_per_step\": " + std::to_string(schedule.pieces_per_step()) +
         ", \"micro_batch_size\": " + std::to_string(schedule.micro_batch_size()) +
         ", \"precision\": " +
         JsonString(plan.precision() == proto::PRECISION_BF16 ? "bf16" : "float32") +
         ",\n \"actors\": " + std::to_string(plan.actor_size()) +
         ", \"actors_by_kind\": " + JsonFields(by_kind) + ",\n \"devices\": [" + devices + "]}\n";
}

}  // namespace compiler
}  // namespace softwire
