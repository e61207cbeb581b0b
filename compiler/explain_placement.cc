// ExplainPlacement (compiler.h): what `softwire compile --explain` prints. Runs the passes
// through insert_boxing and describes the stages, every op's devices and nd-sbp with the costs
// that chose them, and every boxing edge.
#include <cstdio>

#include "compiler/compilation.h"
#include "compiler/compiler.h"
#include "compiler/memory_budget.h"
#include "compiler/ops/op_registry.h"
#include "compiler/pass_manager.h"
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

std::string Seconds(double seconds) {
  char text[32];
  if (seconds == 0) return "0 s";
  if (seconds < 1e-3) {
    std::snprintf(text, sizeof(text), "%.3g us", seconds * 1e6);
  } else if (seconds < 1) {
    std::snprintf(text, sizeof(text), "%.3g ms", seconds * 1e3);
  } else {
    std::snprintf(text, sizeof(text), "%.3g s", seconds);
  }
  return text;
}

std::string Pad(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string Devices(const Compilation& compilation, const placement::DeviceMesh& mesh) {
  std::string text;
  for (int device : mesh.devices) {
    text += (text.empty() ? "" : ", ") + compilation.devices[device].FullName();
  }
  return text + " as [" + std::to_string(mesh.shape[0]) + "][" + std::to_string(mesh.shape[1]) +
         "]";
}

std::string Layout(const LogicalOp& op) {
  std::string text;
  for (size_t i = 0; i < op.placement.inputs.size(); ++i) {
    text += (i ? " x " : "") + placement::NdSbpToString(op.placement.inputs[i]);
  }
  text += op.placement.inputs.empty() ? "->" : " ->";
  for (const placement::NdSbp& sbp : op.placement.outputs) {
    text += " " + placement::NdSbpToString(sbp);
  }
  return text;
}

std::string StageLines(const Compilation& compilation) {
  const StageReport& report = compilation.stage_report;
  std::string text;
  for (int stage = 0; stage < compilation.parallel.pipeline; ++stage) {
    text += "  stage " + std::to_string(stage) + ": " +
            Devices(compilation, compilation.meshes[stage]) + "; " +
            std::to_string(report.forward_ops[stage]) + " forward ops, " +
            Seconds(report.stage_seconds[stage]) + " per piece\n";
  }
  if (compilation.parallel.pipeline > 1) {
    text += "  bottleneck " + Seconds(report.bottleneck_seconds) +
            " per piece (work of forward and backward ops and updates over the stage's devices, "
            "plus transfers into it)\n";
  }
  return text;
}

std::string OpLines(const Compilation& compilation, const std::vector<OpId>& order) {
  size_t name_width = 2;
  for (OpId id : order) name_width = std::max(name_width, compilation.graph.op(id).name.size());
  std::string text =
      "  " + Pad("op", name_width) + "  stage  devices  layout (inputs -> outputs)\n";
  for (OpId id : order) {
    const LogicalOp& op = compilation.graph.op(id);
    const placement::DeviceMesh& mesh = compilation.meshes[op.placement.mesh];
    std::string devices = "[";
    for (size_t i = 0; i < mesh.devices.size(); ++i) {
      devices += (i ? "," : "") + std::to_string(mesh.devices[i]);
    }
    devices += "]";
    text += "  " + Pad(op.name, name_width) + "  " + Pad(std::to_string(op.placement.stage), 5) +
            "  " + Pad(devices, 7) + "  " + Layout(op);
    const OpPlacement& placed = op.placement;
    if (placed.candidates > 0) {
      const double local =
          placed.compute_seconds + placed.boxing_seconds + placed.output_boxing_seconds;
      text += "  compute " + Seconds(placed.compute_seconds) + " + boxing in " +
              Seconds(placed.boxing_seconds) + " + out " + Seconds(placed.output_boxing_seconds) +
              " = " + Seconds(local) + ", best of " + std::to_string(placed.candidates);
      if (!placed.runner_up.empty()) {
        text += "; next " + placed.runner_up + " " + Seconds(placed.runner_up_seconds);
      }
      if (!placed.greedy_choice.empty()) {
        const double avoided =
            placed.greedy_boxing_seconds - placed.boxing_seconds - placed.output_boxing_seconds;
        text += "; greedy chose " + placed.greedy_choice + " with boxing in + out " +
                Seconds(placed.greedy_boxing_seconds) +
                (avoided > 0 ? " (avoided " + Seconds(avoided) + ")" : "");
      }
    }
    text += "\n";
  }
  return text;
}

// The sbp choice: the method and the estimated step time under greedy and the choice made.
std::string SbpSearchLines(const Compilation& compilation) {
  const SbpSearchReport& report = compilation.sbp_search;
  const double pieces = static_cast<double>(compilation.schedule.pieces_per_step);
  std::string text = "sbp choice (--sbp-search " + report.method +
                     "): estimated step time (compute + boxing, summed over ops, no overlap) " +
                     Seconds(report.chosen_seconds * pieces);
  if (report.method == "global") {
    const double saved = report.greedy_seconds - report.chosen_seconds;
    char share[32];
    std::snprintf(share, sizeof(share), "%.1f%%",
                  report.greedy_seconds > 0 ? 100 * saved / report.greedy_seconds : 0.0);
    text += " against " + Seconds(report.greedy_seconds * pieces) + " under greedy (" +
            Seconds(saved * pieces) + ", " + share + " less); " +
            std::to_string(report.ops_changed) + " op" + (report.ops_changed == 1 ? "" : "s") +
            " chose differently";
  }
  return text + "\n";
}

std::string BoxingLines(const Compilation& compilation) {
  if (compilation.boxing.empty()) return "  none\n";
  std::string text;
  for (const BoxingEdge& edge : compilation.boxing) {
    const LogicalTensor& tensor = compilation.graph.tensor(edge.tensor);
    text += "  " + tensor.name + " " + tensor.type.ToString() + ": " +
            placement::NdSbpToString(edge.from) + " on " +
            compilation.meshes[edge.from_mesh].ToString() + " -> " +
            placement::NdSbpToString(edge.to) + " on " +
            compilation.meshes[edge.to_mesh].ToString() + ": " + edge.plan.Describe() + ", " +
            Seconds(edge.plan.seconds) + (tensor.period > 1 ? " per step" : " per piece") + "\n";
  }
  return text;
}

// How a variable's bf16 copy is kept: cast every step, or (fold_weight_casts) cast on the first
// step and written by the optimizer update after each step. The fold is decided per device on
// the task graph, where the cast must read the update's very weight register; explain runs no
// further than boxing, so it says what the option asks for.
std::string VariableCopyNote(const Compilation& compilation, const LogicalTensor& variable) {
  std::string update;
  for (const TensorUse& use : variable.consumers) {
    const std::string& type = compilation.graph.op(use.op).type;
    if (type == "sgd_update" || type == "adam_update") update = compilation.graph.op(use.op).name;
  }
  if (!compilation.options().fold_weight_casts || update.empty()) {
    return " (float32 master, cast once per step)";
  }
  return " (float32 master; cast on the first step, then written by " + update +
         " in its pass over the weight wherever it updates the cast's own weight register)";
}

// Under bf16: every bfloat16 tensor, what it copies and which products read it, and why.
std::string PrecisionLines(const Compilation& compilation) {
  const PrecisionChoice& choice = compilation.precision;
  if (choice.precision != proto::PRECISION_BF16) {
    if (choice.reason == "the default") return "";  // Plain float32 jobs read as before.
    return "precision: float32 (" + choice.reason + ")\n";
  }
  const LogicalGraph& graph = compilation.graph;
  std::string text = "precision: bf16 (" + choice.reason +
                     "): products read bfloat16 copies and accumulate in float32; " +
                     (choice.activations.empty()
                          ? std::string("everything else float32\n")
                          : std::to_string(choice.activations.size()) +
                                " activations between convolutions stored in bfloat16 (float32 "
                                "inside each op), weight gradients and the optimizer float32\n");
  for (const auto& [name, why] : choice.activations) {
    text += "  " + name + " [bf16]: " + why + "\n";
  }
  for (const LogicalOp& op : graph.ops()) {
    if (op.type != "cast") continue;
    const LogicalTensor& source = graph.tensor(op.inputs[0]);
    const LogicalTensor& copy = graph.tensor(op.outputs[0]);
    const bool of_variable = graph.op(source.producer).type == "variable";
    std::string readers;
    for (const TensorUse& use : copy.consumers) {
      readers += (readers.empty() ? "" : ", ") + graph.op(use.op).name;
    }
    text += "  " + copy.name + " " + copy.type.ToString() + ": copy of " + source.name +
            (of_variable ? VariableCopyNote(compilation, source) : "") + ", read by " + readers +
            "\n";
  }
  return text;
}

// choose_layouts: each region of convolutions with its layout, the candidates' estimates and
// what the chosen one saves over plain NCHW.
std::string LayoutLines(const Compilation& compilation) {
  const LayoutReport& report = compilation.layouts;
  if (report.regions.empty()) return "";
  std::string text =
      "layouts (--layouts " + report.mode + "): " + std::to_string(report.regions.size()) +
      " region" + (report.regions.size() == 1 ? "" : "s") + " of convolutions, " +
      std::to_string(report.reorders) + " reorder op" + (report.reorders == 1 ? "" : "s") + "\n";
  for (size_t r = 0; r < report.regions.size(); ++r) {
    const LayoutRegion& region = report.regions[r];
    std::string candidates;
    for (const auto& [layout, seconds] : region.candidates) {
      candidates += (candidates.empty() ? "" : ", ") + std::string(LayoutName(layout)) + " " +
                    Seconds(seconds);
    }
    text += "  region " + std::to_string(r + 1) + " (" +
            std::to_string(region.convolutions.size()) + " convolutions, " +
            region.convolutions.front() + " ...): " + LayoutName(region.layout) + " " +
            region.reason + ", " + std::to_string(region.tensors) +
            " tensors laid out; convolutions and reorders " + Seconds(region.seconds) +
            " per piece against " + Seconds(region.plain_seconds) + " all NCHW (saves " +
            Seconds(region.plain_seconds - region.seconds) + "); candidates: " + candidates + "\n";
  }
  return text;
}

}  // namespace

StatusOr<std::string> ExplainPlacement(const JobFile& job_file, const CompileOptions& options) {
  const OpRegistry registry = MakeStandardOps();
  std::unique_ptr<Compilation> placed = std::make_unique<Compilation>(job_file, options, registry);
  std::vector<Pass> passes;
  for (const Pass& pass : StandardPasses()) {
    passes.push_back(pass);
    if (pass.name == "insert_boxing") break;
  }
  SOFTWIRE_RETURN_IF_ERROR(PassManager(std::move(passes)).Run(*placed));
  // Under a memory budget the whole compilation decides (it may shard updates, which changes
  // the placement), and its choices are explained too.
  bool budgeted = false;
  for (const TargetDevice& device : placed->devices) budgeted |= device.spec.memory_bytes() > 0;
  if (budgeted) {
    SOFTWIRE_ASSIGN_OR_RETURN(placed, CompileWithinBudget(job_file, options, registry));
  }
  const Compilation& compilation = *placed;
  SOFTWIRE_ASSIGN_OR_RETURN(std::vector<OpId> order, compilation.graph.TopologicalOrder());
  const ParallelSettings& parallel = compilation.parallel;
  return "placement of '" + compilation.job().name() + "': data_parallel " +
         std::to_string(parallel.data) + " x tensor_parallel " + std::to_string(parallel.tensor) +
         " x pipeline_stages " + std::to_string(parallel.pipeline) + " on " +
         std::to_string(parallel.devices()) + " devices\n" + PrecisionLines(compilation) +
         LayoutLines(compilation) + "stages:\n" + StageLines(compilation) +
         SbpSearchLines(compilation) +
         "ops (seconds per piece by the cost model; boxing out: into the inputs this op "
         "feeds):\n" +
         OpLines(compilation, order) + "boxing:\n" + BoxingLines(compilation) +
         DescribeBudget(compilation);
}

}  // namespace compiler
}  // namespace softwire
