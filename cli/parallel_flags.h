// The flags that say where a job runs and how it is split, shared by `softwire run`,
// `softwire compile` and `softwire simulate` (docs/PARALLELISM.md):
//
//   --cluster SPEC        a cluster file or a shorthand: 4cpu, 2x4cpu, 8sim, 2x4sim:16GiB
//   --dp N --tp N --pp N  degrees of data, tensor and pipeline parallelism (over the job's)
//   --micro-batches M     micro-batches per step (over the job's)
//   --precision P         float32, bf16 or auto (over the job's; docs/PRECISION.md)
//   --layouts L           auto, nchw, nhwc or nChw16c (docs/LAYOUTS.md)
//   --sbp-search M        global (default) or greedy (docs/PARALLELISM.md, "Sbp")
//   --source-slots N      1 or 2 slots per source output (default: the compiler's choice)
//
//   ParallelFlags parallel;
//   AddParallelFlags(&parser, &parallel);
//   ... parse ...
//   SOFTWIRE_RETURN_IF_ERROR(ApplyParallelFlags(parallel, &compile_options));
#ifndef SOFTWIRE_CLI_PARALLEL_FLAGS_H_
#define SOFTWIRE_CLI_PARALLEL_FLAGS_H_

#include <cstdint>
#include <string>

#include "base/status.h"
#include "cli/flag_parser.h"
#include "compiler/compiler.h"

namespace softwire {
namespace cli {

// A count flag's value when the flag was not given (the job's setting stands).
constexpr int64_t kNotGiven = -1;

struct ParallelFlags {
  std::string cluster;  // Empty: one cpu device.
  int64_t dp = kNotGiven;
  int64_t tp = kNotGiven;
  int64_t pp = kNotGiven;
  int64_t micro_batches = kNotGiven;
  bool no_memory_reuse = false;         // Every register keeps bytes of its own (to compare).
  bool no_views = false;                // Reshapes and transposes stay copies (to compare).
  bool no_in_place = false;             // Element-wise ops write outputs of their own (to compare).
  int64_t recompute = 0;                // Activations recomputed in backward whatever the budget.
  bool no_fusion = false;               // Element-wise chains stay one actor per op (to compare).
  bool no_epilogues = false;            // Products stay out of fused actors (to compare).
  bool no_ordering_edges = false;       // Weight-gradient products unordered (to compare).
  bool no_weight_cast_folding = false;  // bf16: variables cast every step (to compare).
  bool no_bf16_activations = false;     // bf16: float32 between convolutions (to compare).
  std::string precision;                // Empty: the job's.
  std::string layouts;                  // Empty: auto.
  std::string sbp_search;               // Empty: global.
  int64_t max_in_flight = 1;            // Per compute and copy actor (ActorDef.max_in_flight).
  int64_t source_slots = 0;             // Slots per source output; 0: the compiler's choice.
};

// Registers the flags above.
void AddParallelFlags(FlagParser* parser, ParallelFlags* flags);

// InvalidArgument naming the flag for a degree or micro-batch count below 1, a cluster spec
// placement::LoadClusterSpec rejects, a precision other than float32, bf16 and auto, or a
// source slot count other than 0, 1 and 2;
// otherwise sets the cluster, the degrees given, micro_batches_per_step and the precision.
Status ApplyParallelFlags(const ParallelFlags& flags, compiler::CompileOptions* options);

// `--precision`'s value: float32, bf16 (or bfloat16), auto; empty: PRECISION_UNSPECIFIED (the
// job's). InvalidArgument naming the flag otherwise.
StatusOr<proto::Precision> ParsePrecision(const std::string& value);

}  // namespace cli
}  // namespace softwire

#endif  // SOFTWIRE_CLI_PARALLEL_FLAGS_H_
