// choose_layouts: the memory layout of the image batches between convolutions
// (docs/LAYOUTS.md), after choose_sbp, so it knows which tensors cross devices.
//
// Image operands: the rank-4 float32/bfloat16 [N, C, H, W] tensors that convolutions (conv2d
// and its two gradients), batch_norm (its gradient and statistics), the element-wise ops
// (relu, add, add_n, cast, ... on equal shapes), the pools and their gradients read or write. Those
// ops have kernels for every layout of base/layout.h. A convolution takes each image operand in its
// own layout; the other ops want all their image operands in one, so they tie them into a *group*
// that shares a layout. Groups joined through convolutions form a *region*; everything outside
// regions is plain NCHW, the job's layout, and so are the job's boundaries (sources, variables,
// losses, whatever another op reads).
//
// Each region takes one layout, the cheapest by the cost model (`--layouts auto`, the default)
// or the one forced (`--layouts nchw|nhwc|nChw16c`; nchw is the behaviour before this pass):
// every group of the region whose tensors all fit the layout (nChw16c needs C % 16 == 0) takes
// it, the others stay plain. A convolution's estimate is its op cost times the layout's
// measured factor (LayoutFactor below, from bench/conv/conv_layouts_bench on Zen 4), plus a
// reorder of every plain image operand, which the convolution kernel makes itself (oneDNN runs
// on its blocked layouts); a reorder op is its bytes over the device's bandwidth.
//
// Reorders: a reader that wants another layout than the one a tensor is stored in reads it
// through a `reorder` op, one per tensor and wanted layout (and mesh and nd-sbp). Boxing moves
// plain tensors only: where an edge needs boxing (another mesh, another nd-sbp: a pipeline
// stage boundary, the channel split of batch_norm_statistics under data parallelism), the
// tensor is reordered to plain next to its producer and, where the reader wants a layout,
// back next to the reader. A tensor split on another axis than the batch stays plain.
#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "compiler/ops/graph_builder.h"
#include "compiler/passes/passes.h"
#include "compiler/physical/op_cost.h"
#include "placement/boxing_plan.h"
#include "placement/cost_model.h"

namespace softwire {
namespace compiler {
namespace {

// How an op treats its image operands.
enum class Treatment {
  kNone,  // Plain in and out (no kernel for other layouts).
  kFree,  // Each image operand in its own layout (convolutions, pools, statistics).
  kTied,  // All image operands in one layout (element-wise ops, batch_norm, windowed pools).
};

bool IsConvolution(const std::string& type) {
  return type == "conv2d" || type == "conv2d_grad_input" || type == "conv2d_grad_filter";
}

Treatment TreatmentOf(const std::string& type) {
  if (IsConvolution(type) || type == "batch_norm_statistics" || type == "global_avg_pool" ||
      type == "global_avg_pool_grad") {
    return Treatment::kFree;
  }
  static const std::set<std::string> tied = {
      "batch_norm", "batch_norm_grad", "relu",     "relu_grad", "gelu", "gelu_grad", "add", "sub",
      "mul",        "add_n",           "identity", "scale",     "cast"};
  return tied.count(type) > 0 ? Treatment::kTied : Treatment::kNone;
}

// The image operands of an op: which inputs and outputs (by index) may be laid out.
struct Operands {
  std::vector<int> inputs;
  std::vector<int> outputs;
};

bool IsImage(const TensorType& type) {
  return type.shape.rank() == 4 &&
         (type.dtype == DType::kFloat32 || type.dtype == DType::kBFloat16);
}

Operands ImageOperands(const LogicalGraph& graph, const LogicalOp& op) {
  Operands operands;
  const Treatment treatment = TreatmentOf(op.type);
  if (treatment == Treatment::kNone) return operands;
  auto image = [&](TensorId id) { return IsImage(graph.tensor(id).type); };
  if (op.type == "conv2d" || op.type == "conv2d_grad_input" || op.type == "global_avg_pool" ||
      op.type == "batch_norm" || op.type == "batch_norm_statistics") {
    if (image(op.inputs[0])) operands.inputs = {0};
  } else if (op.type == "conv2d_grad_filter" || op.type == "batch_norm_grad" ||
             op.type == "max_pool2d_grad") {
    operands.inputs = {0, 1};
  } else if (op.type == "max_pool2d" || op.type == "avg_pool2d" || op.type == "avg_pool2d_grad") {
    operands.inputs = {0};
  } else if (op.type != "global_avg_pool_grad") {
    // Element-wise: every input, all of one shape (no broadcasting).
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (!image(op.inputs[i]) ||
          graph.tensor(op.inputs[i]).type.shape != graph.tensor(op.outputs[0]).type.shape) {
        return {};
      }
      operands.inputs.push_back(static_cast<int>(i));
    }
  }
  if (op.type != "conv2d_grad_filter" && op.type != "global_avg_pool" &&
      op.type != "batch_norm_statistics" && image(op.outputs[0])) {
    operands.outputs = {0};
  }
  for (int i : operands.inputs) {
    if (!image(op.inputs[i])) return {};
  }
  return operands;
}

// Disjoint sets of tensor ids.
class UnionFind {
 public:
  explicit UnionFind(int size) : parent_(size) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int x) const {  // With path halving: parent_ is a cache of the same sets.
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  mutable std::vector<int> parent_;
};

// Measured time of oneDNN 2.6's convolutions on image operands held in `layout`, relative to
// nChw16c, single-threaded on Zen 4 (bench/conv/conv_layouts_bench: the 20 convolutions of
// ResNet-20 in lanes of 16 images, forward and both gradients; medians of three runs on the
// shared machine, each 0.85-1.03 in float32 and 0.94-0.96 in bfloat16): NHWC 0.92x in float32
// (oneDNN's brgemm kernels run its forward passes), 0.95x in bfloat16. A plain operand costs a
// reorder on top (the kernel's own, to nChw16c; to NHWC beside NHWC operands).
double LayoutFactor(Layout layout, DType dtype) {
  if (layout != Layout::kNhwc) return 1.0;
  return dtype == DType::kBFloat16 ? 0.95 : 0.92;
}

bool ParseMode(const std::string& mode, std::optional<Layout>* forced) {
  if (mode.empty() || mode == "auto") return true;
  StatusOr<Layout> layout = ParseLayout(mode);
  if (!layout.ok()) return false;
  *forced = *layout;
  return true;
}

class LayoutChooser {
 public:
  explicit LayoutChooser(Compilation& compilation)
      : compilation_(compilation),
        graph_(compilation.graph),
        cost_(*compilation.cluster),
        groups_(compilation.graph.tensor_count()),
        regions_(compilation.graph.tensor_count()) {}

  Status Run() {
    std::optional<Layout> forced;
    if (!ParseMode(compilation_.options().layouts, &forced)) {
      return InvalidArgumentError("--layouts: unknown layout '" + compilation_.options().layouts +
                                  "' (expected auto, nchw, nhwc or nChw16c)");
    }
    compilation_.layouts = LayoutReport();
    compilation_.layouts.mode = forced ? LayoutName(*forced) : "auto";
    if (forced && *forced == Layout::kPlain) return Status::Ok();
    const int tensor_count = graph_.tensor_count();
    const int op_count = graph_.op_count();
    operands_.resize(op_count);
    std::vector<bool> image(tensor_count, false);
    for (OpId id = 0; id < op_count; ++id) {
      const LogicalOp& op = graph_.op(id);
      operands_[id] = ImageOperands(graph_, op);
      std::vector<TensorId> tensors;
      for (int i : operands_[id].inputs) tensors.push_back(op.inputs[i]);
      for (int i : operands_[id].outputs) tensors.push_back(op.outputs[i]);
      for (TensorId t : tensors) {
        image[t] = true;
        regions_.Union(t, tensors[0]);
        if (TreatmentOf(op.type) == Treatment::kTied) groups_.Union(t, tensors[0]);
      }
    }
    // Regions with a convolution, in the order of their first convolution.
    std::map<int, int> region_index;
    for (OpId id = 0; id < op_count; ++id) {
      if (!IsConvolution(graph_.op(id).type) || operands_[id].inputs.empty()) continue;
      const int root = regions_.Find(graph_.op(id).inputs[operands_[id].inputs[0]]);
      if (region_index.emplace(root, static_cast<int>(region_index.size())).second) {
        compilation_.layouts.regions.emplace_back();
      }
      compilation_.layouts.regions[region_index[root]].convolutions.push_back(graph_.op(id).name);
    }
    if (region_index.empty()) return Status::Ok();
    // Groups that cannot take a layout: a tensor split on another axis than the batch, or
    // per-step (weights and their gradients are never images here).
    std::set<int> pinned;
    for (TensorId t = 0; t < tensor_count; ++t) {
      if (!image[t]) continue;
      const LogicalTensor& tensor = graph_.tensor(t);
      const LogicalOp& producer = graph_.op(tensor.producer);
      bool ok = tensor.period == 1;
      for (const placement::Sbp& sbp : producer.placement.outputs[tensor.producer_output]) {
        if (sbp.kind == placement::Sbp::Kind::kSplit && sbp.axis != 0) ok = false;
      }
      if (!ok) pinned.insert(groups_.Find(t));
    }
    group_layout_.assign(tensor_count, Layout::kPlain);
    image_ = image;
    pinned_ = pinned;
    // Each region: its layout.
    for (const auto& [root, index] : region_index) {
      LayoutRegion& region = compilation_.layouts.regions[index];
      std::vector<Layout> candidates = {Layout::kPlain, Layout::kNhwc, Layout::kNChw16c};
      if (forced) candidates = {Layout::kPlain, *forced};
      for (Layout layout : candidates) {
        Assign(root, layout);
        region.candidates.push_back({layout, RegionSeconds(root)});
      }
      region.plain_seconds = region.candidates[0].second;
      auto best = region.candidates.begin();
      if (forced) {
        best = region.candidates.begin() + 1;
      } else {
        for (auto it = region.candidates.begin(); it != region.candidates.end(); ++it) {
          if (it->second < best->second) best = it;
        }
      }
      region.layout = best->first;
      region.seconds = best->second;
      region.reason = forced ? "forced by --layouts " + std::string(LayoutName(*forced))
                             : "chosen by the cost model";
      Assign(root, region.layout);
      for (TensorId t = 0; t < tensor_count; ++t) {
        if (image_[t] && regions_.Find(t) == root && Stored(t) != Layout::kPlain) ++region.tensors;
      }
    }
    return Insert();
  }

 private:
  // Every group of the region with root `root` takes `layout` where all its tensors fit it.
  void Assign(int region_root, Layout layout) {
    std::map<int, bool> fits;  // Group root -> every tensor fits.
    for (TensorId t = 0; t < graph_.tensor_count(); ++t) {
      if (!image_[t] || regions_.Find(t) != region_root) continue;
      const int group = groups_.Find(t);
      const bool fit = LayoutFits(layout, graph_.tensor(t).type.shape) && pinned_.count(group) == 0;
      auto found = fits.find(group);
      if (found == fits.end()) {
        fits[group] = fit;
      } else {
        found->second = found->second && fit;
      }
    }
    for (TensorId t = 0; t < graph_.tensor_count(); ++t) {
      if (!image_[t] || regions_.Find(t) != region_root) continue;
      group_layout_[t] = fits[groups_.Find(t)] ? layout : Layout::kPlain;
    }
  }

  bool IsOperand(const std::vector<int>& list, int index) const {
    return std::find(list.begin(), list.end(), index) != list.end();
  }

  // The layout a tensor is written in: its group's where its producer writes that layout.
  Layout Stored(TensorId t) const {
    if (!image_[t]) return Layout::kPlain;
    const LogicalTensor& tensor = graph_.tensor(t);
    return IsOperand(operands_[tensor.producer].outputs, tensor.producer_output) ? group_layout_[t]
                                                                                 : Layout::kPlain;
  }

  // The layout op `op` reads input `i` in: plain where it reads a part split on another axis
  // than the batch (batch_norm_statistics reads channels under data parallelism).
  Layout Wanted(OpId op, int i) const {
    const TensorId t = graph_.op(op).inputs[i];
    if (!IsOperand(operands_[op].inputs, i)) return Layout::kPlain;
    for (const placement::Sbp& sbp : graph_.op(op).placement.inputs[i]) {
      if (sbp.kind == placement::Sbp::Kind::kSplit && sbp.axis != 0) return Layout::kPlain;
    }
    return group_layout_[t];
  }

  bool NeedsBoxing(TensorId t, OpId consumer, int input) const {
    const LogicalTensor& tensor = graph_.tensor(t);
    const LogicalOp& producer = graph_.op(tensor.producer);
    const LogicalOp& op = graph_.op(consumer);
    placement::BoxingRequest request{&compilation_.meshes[producer.placement.mesh],
                                     producer.placement.outputs[tensor.producer_output],
                                     &compilation_.meshes[op.placement.mesh],
                                     op.placement.inputs[input],
                                     &tensor.type.shape.dims(),
                                     static_cast<int64_t>(SizeOf(tensor.type.dtype))};
    return placement::PlanBoxing(cost_, request).needed;
  }

  int DeviceOf(OpId op) const {
    return compilation_.meshes[graph_.op(op).placement.mesh].devices[0];
  }

  // Seconds of one reorder of `t`'s local value on the device of `op`.
  double ReorderSeconds(TensorId t, OpId op) const {
    const LogicalOp& producer = graph_.op(graph_.tensor(t).producer);
    const placement::DeviceMesh& mesh = compilation_.meshes[producer.placement.mesh];
    const TensorType local =
        LocalType(graph_.tensor(t).type,
                  producer.placement.outputs[graph_.tensor(t).producer_output], mesh.shape);
    const double bytes = static_cast<double>(local.NumBytes());
    return cost_.ComputeSeconds(DeviceOf(op), static_cast<double>(local.NumElements()), 2 * bytes);
  }

  // A convolution's estimate with its operands as assigned.
  double ConvolutionSeconds(OpId id) const {
    const LogicalOp& op = graph_.op(id);
    const OpDefinition& definition = *compilation_.registry().Find(op.type);
    const placement::DeviceMesh& mesh = compilation_.meshes[op.placement.mesh];
    std::vector<TensorType> inputs, outputs;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      inputs.push_back(
          LocalType(graph_.tensor(op.inputs[i]).type, op.placement.inputs[i], mesh.shape));
    }
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      outputs.push_back(
          LocalType(graph_.tensor(op.outputs[i]).type, op.placement.outputs[i], mesh.shape));
    }
    double seconds = OpSeconds(definition, inputs, outputs, op.attributes, cost_, DeviceOf(id));
    // The layout the kernel runs on: its operands' (the first laid-out one), else nChw16c.
    std::vector<std::pair<TensorId, Layout>> images;  // Each image operand and its layout.
    for (int i : operands_[id].inputs) images.push_back({op.inputs[i], Wanted(id, i)});
    for (int i : operands_[id].outputs) images.push_back({op.outputs[i], Stored(op.outputs[i])});
    Layout runs = Layout::kNChw16c;
    for (const auto& [t, layout] : images) {
      if (layout != Layout::kPlain) {
        runs = layout;
        break;
      }
    }
    seconds *= LayoutFactor(runs, inputs[0].dtype);
    for (const auto& [t, layout] : images) {
      if (layout == Layout::kPlain) seconds += ReorderSeconds(t, id);
    }
    return seconds;
  }

  // A reader of `t` at (op, input): the reorders it needs, as (tensor, layout, at the producer).
  struct Need {
    bool at_producer = false;  // Reorder to plain next to the producer (before boxing).
    bool at_consumer = false;  // Reorder to the wanted layout next to the reader.
  };
  Need NeedOf(TensorId t, OpId op, int input) const {
    Need need;
    const Layout stored = Stored(t);
    const Layout wanted = Wanted(op, input);
    if (stored == Layout::kPlain && wanted == Layout::kPlain) return need;
    if (NeedsBoxing(t, op, input)) {
      need.at_producer = stored != Layout::kPlain;
      need.at_consumer = wanted != Layout::kPlain;
    } else {
      need.at_consumer = stored != wanted;
    }
    return need;
  }

  // Convolutions' estimates plus the reorders the region's assignment needs, per piece.
  double RegionSeconds(int region_root) const {
    double seconds = 0;
    std::set<std::pair<TensorId, int>> counted;  // (tensor, wanted layout or -1 for plain).
    for (OpId id = 0; id < graph_.op_count(); ++id) {
      const LogicalOp& op = graph_.op(id);
      if (IsConvolution(op.type) && !operands_[id].inputs.empty() &&
          regions_.Find(op.inputs[operands_[id].inputs[0]]) == region_root) {
        seconds += ConvolutionSeconds(id);
      }
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        const TensorId t = op.inputs[i];
        if (!image_[t] || regions_.Find(t) != region_root) continue;
        const Need need = NeedOf(t, id, static_cast<int>(i));
        if (need.at_producer && counted.insert({t, -1}).second) seconds += ReorderSeconds(t, id);
        if (need.at_consumer &&
            counted.insert({t, static_cast<int>(Wanted(id, static_cast<int>(i)))}).second) {
          seconds += ReorderSeconds(t, id);
        }
      }
    }
    return seconds;
  }

  // A reorder of `source` to `layout`, placed like `placed` reads or writes it.
  StatusOr<TensorId> AddReorder(TensorId source, Layout layout, OpId like, bool like_producer,
                                int index) {
    const LogicalTensor& tensor = graph_.tensor(source);
    const LogicalOp& model = graph_.op(like);
    const placement::NdSbp sbp =
        like_producer ? model.placement.outputs[index] : model.placement.inputs[index];
    const std::string name = graph_.UniqueTensorName(tensor.name + "." + LayoutName(layout));
    TensorType type = tensor.type;
    type.layout = layout;
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId output, graph_.AddTensor(name, type));
    AttributeMap attributes;
    attributes.Set("layout", std::string(LayoutName(layout)));
    NewOp op;
    op.name = graph_.UniqueOpName(name);
    op.type = "reorder";
    op.inputs = {source};
    op.outputs = {output};
    op.attributes = attributes;
    op.gradient_of = model.gradient_of;
    SOFTWIRE_ASSIGN_OR_RETURN(OpId id, graph_.AddOp(std::move(op)));
    SOFTWIRE_RETURN_IF_ERROR(InferOpOutputs(compilation_.registry(), graph_, id));
    LogicalOp& added = graph_.mutable_op(id);
    const LogicalOp& again = graph_.op(like);  // AddOp may have moved nothing, but be safe.
    added.period = graph_.tensor(source).period;
    added.sequence = again.sequence + (like_producer ? 0.25 : -0.25);
    added.placement.role = again.placement.role;
    added.placement.stage = again.placement.stage;
    added.placement.mesh = again.placement.mesh;
    added.placement.inputs = {sbp};
    added.placement.outputs = {sbp};
    graph_.mutable_tensor(output).period = graph_.tensor(source).period;
    ++compilation_.layouts.reorders;
    return output;
  }

  Status Insert() {
    const int tensor_count = graph_.tensor_count();
    const int op_count = graph_.op_count();
    // Stored layouts first (the graph's types), from the assignment.
    std::vector<Layout> stored(tensor_count);
    for (TensorId t = 0; t < tensor_count; ++t) stored[t] = Stored(t);
    std::vector<std::tuple<OpId, int, Need, Layout>> reads;
    for (OpId id = 0; id < op_count; ++id) {
      const LogicalOp& op = graph_.op(id);
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        if (!image_[op.inputs[i]]) continue;
        const Need need = NeedOf(op.inputs[i], id, static_cast<int>(i));
        if (need.at_producer || need.at_consumer) {
          reads.emplace_back(id, static_cast<int>(i), need, Wanted(id, static_cast<int>(i)));
        }
      }
    }
    for (TensorId t = 0; t < tensor_count; ++t) graph_.mutable_tensor(t).type.layout = stored[t];
    std::map<TensorId, TensorId> plain_copies;  // Next to the producer.
    std::map<std::tuple<TensorId, int, std::string, int>, TensorId> copies;  // Next to readers.
    for (const auto& [id, input, need, wanted] : reads) {
      TensorId source = graph_.op(id).inputs[input];
      const TensorId original = source;
      if (need.at_producer) {
        auto found = plain_copies.find(original);
        if (found == plain_copies.end()) {
          const LogicalTensor& tensor = graph_.tensor(original);
          SOFTWIRE_ASSIGN_OR_RETURN(
              TensorId copy,
              AddReorder(original, Layout::kPlain, tensor.producer, true, tensor.producer_output));
          found = plain_copies.emplace(original, copy).first;
        }
        source = found->second;
      }
      if (need.at_consumer) {
        const LogicalOp& op = graph_.op(id);
        auto key = std::make_tuple(source, op.placement.mesh,
                                   placement::NdSbpToString(op.placement.inputs[input]),
                                   static_cast<int>(wanted));
        auto found = copies.find(key);
        if (found == copies.end()) {
          SOFTWIRE_ASSIGN_OR_RETURN(TensorId copy, AddReorder(source, wanted, id, false, input));
          found = copies.emplace(key, copy).first;
        }
        source = found->second;
      }
      graph_.ReplaceInput(id, input, source);
    }
    return Status::Ok();
  }

  Compilation& compilation_;
  LogicalGraph& graph_;
  const placement::CostModel cost_;
  UnionFind groups_;
  UnionFind regions_;
  std::vector<Operands> operands_;
  std::vector<bool> image_;
  std::set<int> pinned_;
  std::vector<Layout> group_layout_;  // Per tensor: its group's layout under the assignment.
};

}  // namespace

Status ChooseLayoutsPass(Compilation& compilation) {
  return LayoutChooser(compilation).Run();
}

}  // namespace compiler
}  // namespace softwire
