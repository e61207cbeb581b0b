#include "compiler/ops/op_registry.h"

#include <algorithm>
#include <utility>

namespace softwire {
namespace compiler {

void OpRegistry::Add(OpDefinition definition) {
  CHECK(definition.infer) << "op type '" << definition.type << "' has no inference function";
  std::string type = definition.type;
  bool inserted = definitions_.emplace(type, std::move(definition)).second;
  CHECK(inserted) << "op type '" << type << "' is defined twice";
}

const OpDefinition* OpRegistry::Find(const std::string& type) const {
  auto found = definitions_.find(type);
  return found == definitions_.end() ? nullptr : &found->second;
}

namespace {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

StatusOr<const OpDefinition*> OpRegistry::Lookup(const std::string& type) const {
  const OpDefinition* definition = Find(type);
  if (definition != nullptr) return definition;
  std::string closest;
  size_t best = 3;  // Suggest only near misses.
  for (const std::string& candidate : Types()) {
    size_t distance = EditDistance(type, candidate);
    if (distance < best) {
      best = distance;
      closest = candidate;
    }
  }
  std::string message = "unknown op type '" + type + "'";
  if (!closest.empty()) message += " (did you mean '" + closest + "'?)";
  return InvalidArgumentError(message);
}

std::vector<std::string> OpRegistry::Types() const {
  std::vector<std::string> types;
  for (const auto& entry : definitions_) types.push_back(entry.first);
  std::sort(types.begin(), types.end());
  return types;
}

OpRegistry MakeStandardOps() {
  OpRegistry registry;
  AddMatmulOps(registry);
  AddElementwiseOps(registry);
  AddActivationOps(registry);
  AddSoftmaxOps(registry);
  AddNormalizationOps(registry);
  AddReduceOps(registry);
  AddShapeOps(registry);
  AddEmbeddingOps(registry);
  AddLossOps(registry);
  AddGradientHelperOps(registry);
  AddOptimizerOps(registry);
  AddActorKindOps(registry);
  AddTransferOps(registry);
  AddCastOps(registry);
  AddFusedOps(registry);
  AddConvolutionOps(registry);
  AddPoolingOps(registry);
  AddBatchNormOps(registry);
  AddLayoutOps(registry);
  return registry;
}

}  // namespace compiler
}  // namespace softwire
