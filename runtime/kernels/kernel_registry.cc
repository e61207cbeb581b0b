#include <utility>

#include "plan/labels.h"
#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {

void KernelRegistry::Register(const std::string& op_type, KernelFactory factory) {
  CHECK(factory) << "kernel factory for '" << op_type << "' is empty";
  bool inserted = factories_.emplace(op_type, std::move(factory)).second;
  CHECK(inserted) << "kernel for op type '" << op_type << "' registered twice";
}

bool KernelRegistry::Contains(const std::string& op_type) const {
  return factories_.count(op_type) > 0;
}

std::vector<std::string> KernelRegistry::OpTypes() const {
  std::vector<std::string> op_types;
  op_types.reserve(factories_.size());
  for (const auto& entry : factories_) op_types.push_back(entry.first);
  return op_types;
}

StatusOr<std::unique_ptr<Kernel>> KernelRegistry::Create(const KernelSetup& setup) const {
  CHECK(setup.actor != nullptr) << "KernelSetup without an actor";
  const std::string& op_type = setup.actor->kernel().op_type();
  const std::string context = plan::ActorLabel(setup.actor->name());
  auto found = factories_.find(op_type);
  if (found == factories_.end()) {
    return NotFoundError(context + ": no kernel for op type '" + op_type + "'");
  }
  StatusOr<std::unique_ptr<Kernel>> kernel = found->second(setup);
  if (!kernel.ok()) return kernel.status().WithContext(context);
  if (*kernel == nullptr) {
    return InternalError(context + ": kernel factory for '" + op_type + "' returned null");
  }
  return kernel;
}

}  // namespace runtime
}  // namespace softwire
