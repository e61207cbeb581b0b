#include "cli/parallel_flags.h"

#include <string>
#include <utility>

#include "base/layout.h"
#include "placement/cluster_spec.h"

namespace softwire {
namespace cli {

void AddParallelFlags(FlagParser* parser, ParallelFlags* flags) {
  parser->AddString("cluster", &flags->cluster, "SPEC",
                    "devices: a cluster file or a shorthand such as 4cpu, 2x4cpu, 8sim or "
                    "2x4sim:16GiB (default: one cpu device)");
  parser->AddInt("dp", &flags->dp, "N", "data-parallel degree (overrides the job's)");
  parser->AddInt("tp", &flags->tp, "N", "tensor-parallel degree (overrides the job's)");
  parser->AddInt("pp", &flags->pp, "N", "pipeline stages (overrides the job's)");
  parser->AddInt("micro-batches", &flags->micro_batches, "M",
                 "micro-batches per step (overrides the job's)");
  parser->AddBool("no-memory-reuse", &flags->no_memory_reuse,
                  "give every register bytes of its own (lifetime-based reuse off, to compare)");
  parser->AddBool("no-views", &flags->no_views,
                  "keep reshapes and transposes as copies (views off, to compare)");
  parser->AddBool("no-in-place", &flags->no_in_place,
                  "give element-wise ops outputs of their own (in-place ops off, to compare)");
  parser->AddInt("recompute", &flags->recompute, "N",
                 "recompute the N cheapest kept activations in the backward pass whatever the "
                 "memory budget (-1: every candidate; to compare; docs/PARALLELISM.md)");
  parser->AddBool("no-fusion", &flags->no_fusion,
                  "keep one actor per element-wise op (op fusion off, to compare)");
  parser->AddBool("no-epilogues", &flags->no_epilogues,
                  "keep products out of fused actors: element-wise chains still fuse, but not "
                  "into the product that feeds them (product epilogues off, to compare)");
  parser->AddBool("no-ordering-edges", &flags->no_ordering_edges,
                  "add no ordering edge after weight-gradient products (they may then run last "
                  "and keep what they read live through the backward pass; to compare)");
  parser->AddBool("no-weight-cast-folding", &flags->no_weight_cast_folding,
                  "under bf16, cast each variable to bfloat16 every step instead of having its "
                  "optimizer update write the next step's copy (to compare)");
  parser->AddBool("no-bf16-activations", &flags->no_bf16_activations,
                  "under bf16, keep float32 activations between convolutions (each convolution "
                  "casts its inputs and writes float32) instead of bf16 ones (to compare)");
  parser->AddInt("max-in-flight", &flags->max_in_flight, "N",
                 "firings each compute and copy actor may have launched and not completed "
                 "(default 1; docs/PROTOCOL.md)");
  parser->AddInt("source-slots", &flags->source_slots, "N",
                 "slots of each source output: 1 or 2 (to compare); default: 2 where the next "
                 "fill can overlap the step (an asynchronous device, several devices), else 1");
  parser->AddString("precision", &flags->precision, "P",
                    "float32, bf16 (products in bfloat16, float32 master weights) or auto (bf16 "
                    "where this cpu has avx512_bf16 or amx_bf16); overrides the job's");
  parser->AddString("layouts", &flags->layouts, "L",
                    "layouts of the images between convolutions: auto (the cost model chooses, "
                    "the default), nchw (all plain, to compare), nhwc or nChw16c (forced where "
                    "they fit); docs/LAYOUTS.md");
  parser->AddString("sbp-search", &flags->sbp_search, "M",
                    "how each op's nd-sbp is chosen: global (a search over the whole graph for "
                    "the least estimated step time, the default) or greedy (each op the cheapest "
                    "given its inputs, to compare)");
}

StatusOr<proto::Precision> ParsePrecision(const std::string& value) {
  if (value.empty()) return proto::PRECISION_UNSPECIFIED;
  if (value == "float32") return proto::PRECISION_FLOAT32;
  if (value == "bf16" || value == "bfloat16") return proto::PRECISION_BF16;
  if (value == "auto") return proto::PRECISION_AUTO;
  return InvalidArgumentError("--precision must be float32, bf16 or auto, not '" + value + "'");
}

Status ApplyParallelFlags(const ParallelFlags& flags, compiler::CompileOptions* options) {
  const std::pair<const char*, int64_t> counts[] = {
      {"dp", flags.dp}, {"tp", flags.tp}, {"pp", flags.pp}, {"micro-batches", flags.micro_batches}};
  for (const auto& [name, value] : counts) {
    if (value != kNotGiven && value < 1) {
      return InvalidArgumentError(std::string("--") + name + " must be >= 1, not " +
                                  std::to_string(value));
    }
  }
  if (!flags.cluster.empty()) {
    StatusOr<proto::Cluster> cluster = placement::LoadClusterSpec(flags.cluster);
    if (!cluster.ok()) return cluster.status().WithContext("--cluster");
    options->cluster = std::move(cluster).value();
  }
  if (flags.dp > 0) options->parallel.set_data_parallel(static_cast<int32_t>(flags.dp));
  if (flags.tp > 0) options->parallel.set_tensor_parallel(static_cast<int32_t>(flags.tp));
  if (flags.pp > 0) options->parallel.set_pipeline_stages(static_cast<int32_t>(flags.pp));
  if (flags.micro_batches > 0) options->micro_batches_per_step = flags.micro_batches;
  if (flags.max_in_flight < 1 || flags.max_in_flight > 1024) {
    return InvalidArgumentError("--max-in-flight must be 1 to 1024, not " +
                                std::to_string(flags.max_in_flight));
  }
  options->max_in_flight = static_cast<int32_t>(flags.max_in_flight);
  if (flags.source_slots < 0 || flags.source_slots > 2) {
    return InvalidArgumentError("--source-slots must be 1 or 2 (0: the compiler's choice), not " +
                                std::to_string(flags.source_slots));
  }
  options->source_slots = static_cast<int32_t>(flags.source_slots);
  options->share_memory = !flags.no_memory_reuse;
  options->fold_views = !flags.no_views;
  options->in_place = !flags.no_in_place;
  if (flags.recompute < -1) {
    return InvalidArgumentError("--recompute must be -1 (every candidate) or at least 0, not " +
                                std::to_string(flags.recompute));
  }
  options->recompute = static_cast<int32_t>(flags.recompute);
  options->fuse_elementwise = !flags.no_fusion;
  options->fuse_epilogues = !flags.no_epilogues;
  options->ordering_edges = !flags.no_ordering_edges;
  options->fold_weight_casts = !flags.no_weight_cast_folding;
  options->bf16_activations = !flags.no_bf16_activations;
  SOFTWIRE_ASSIGN_OR_RETURN(options->precision, ParsePrecision(flags.precision));
  if (!flags.layouts.empty()) {
    if (flags.layouts != "auto" && !ParseLayout(flags.layouts).ok()) {
      return InvalidArgumentError("--layouts must be auto, nchw, nhwc or nChw16c, not '" +
                                  flags.layouts + "'");
    }
    options->layouts = flags.layouts;
  }
  if (flags.sbp_search == "greedy") {
    options->sbp_search = compiler::SbpSearchMethod::kGreedy;
  } else if (flags.sbp_search.empty() || flags.sbp_search == "global") {
    options->sbp_search = compiler::SbpSearchMethod::kGlobal;
  } else {
    return InvalidArgumentError("--sbp-search must be global or greedy, not '" + flags.sbp_search +
                                "'");
  }
  return Status::Ok();
}

}  // namespace cli
}  // namespace softwire
