// OpRegistry: the op definitions one compilation uses, keyed by type.
//
// Not a global: MakeStandardOps() builds the registry of every op in docs/OPS.md, and callers
// pass it (through Compilation) to whatever needs it. Tests may build smaller or extended
// registries. Read-only after construction, so concurrent lookups are safe.
//
//   OpRegistry registry = MakeStandardOps();
//   const OpDefinition* matmul = registry.Find("matmul");
#ifndef SOFTWIRE_COMPILER_OPS_OP_REGISTRY_H_
#define SOFTWIRE_COMPILER_OPS_OP_REGISTRY_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "compiler/ops/op_definition.h"

namespace softwire {
namespace compiler {

class OpRegistry {
 public:
  // CHECK-fails when the type is already defined or the definition has no inference.
  void Add(OpDefinition definition);

  // Null when unknown.
  const OpDefinition* Find(const std::string& type) const;

  // InvalidArgument "unknown op type 'matmull' (did you mean 'matmul'?)" when unknown.
  StatusOr<const OpDefinition*> Lookup(const std::string& type) const;

  // Every defined type, sorted.
  std::vector<std::string> Types() const;

 private:
  // Hashed: passes look a definition up for every op and task, millions of times.
  std::unordered_map<std::string, OpDefinition> definitions_;
};

// Every op of docs/OPS.md: user ops, internal ops, and actor-kind ops.
OpRegistry MakeStandardOps();

// The families MakeStandardOps adds, one per file, for registries that want only some.
void AddMatmulOps(OpRegistry& registry);
void AddElementwiseOps(OpRegistry& registry);
void AddActivationOps(OpRegistry& registry);
void AddSoftmaxOps(OpRegistry& registry);
void AddNormalizationOps(OpRegistry& registry);
void AddReduceOps(OpRegistry& registry);
void AddShapeOps(OpRegistry& registry);
void AddEmbeddingOps(OpRegistry& registry);
void AddLossOps(OpRegistry& registry);
void AddGradientHelperOps(OpRegistry& registry);
void AddOptimizerOps(OpRegistry& registry);
void AddActorKindOps(OpRegistry& registry);
void AddTransferOps(OpRegistry& registry);
void AddCastOps(OpRegistry& registry);
void AddFusedOps(OpRegistry& registry);
void AddConvolutionOps(OpRegistry& registry);
void AddPoolingOps(OpRegistry& registry);
void AddLayoutOps(OpRegistry& registry);
void AddBatchNormOps(OpRegistry& registry);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_OPS_OP_REGISTRY_H_
