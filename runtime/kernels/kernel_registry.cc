#include <set>
#include <utility>

#include "plan/labels.h"
#include "proto/tensor_desc.h"
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

namespace {

// Tensors in another layout than plain (base/layout.h, docs/LAYOUTS.md) reach only kernels that
// read layouts: those that check them themselves, and element-wise ones, for which a layout
// changes nothing while every input and output has the same dims and layout. Any other kernel
// would read the bytes as row-major: refused here, once, for all of them.
Status CheckLayouts(const proto::KernelDef& def) {
  bool laid_out = false;
  for (const proto::TensorDesc& desc : def.input())
    laid_out |= desc.layout() != proto::LAYOUT_PLAIN;
  for (const proto::TensorDesc& desc : def.output())
    laid_out |= desc.layout() != proto::LAYOUT_PLAIN;
  if (!laid_out) return Status::Ok();
  static const std::set<std::string> aware = {
      "conv2d",          "conv2d_grad_input",    "conv2d_grad_filter",
      "batch_norm",      "batch_norm_grad",      "batch_norm_statistics",
      "global_avg_pool", "global_avg_pool_grad", "reorder",
      "max_pool2d",      "max_pool2d_grad",      "avg_pool2d",
      "avg_pool2d_grad"};
  static const std::set<std::string> element_wise = {"relu",     "relu_grad", "gelu", "gelu_grad",
                                                     "add",      "sub",       "mul",  "add_n",
                                                     "identity", "scale",     "cast", "copy"};
  const std::string& op = def.op_type();
  if (aware.count(op) > 0) return Status::Ok();
  if (element_wise.count(op) == 0) {
    return InvalidArgumentError(op + ": no kernel for tensors in a layout other than plain");
  }
  const proto::TensorDesc& first = def.output_size() > 0 ? def.output(0) : def.input(0);
  auto same = [&](const proto::TensorDesc& desc) {
    return desc.layout() == first.layout() && ShapeOf(desc) == ShapeOf(first);
  };
  bool ok = true;
  for (const proto::TensorDesc& desc : def.input()) ok &= same(desc);
  for (const proto::TensorDesc& desc : def.output()) ok &= same(desc);
  if (!ok) {
    return InvalidArgumentError(op + ": an element-wise op on tensors in layout " +
                                LayoutName(LayoutOf(first)) +
                                " needs every input and output of the same dims and layout");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<Kernel>> KernelRegistry::Create(const KernelSetup& setup) const {
  CHECK(setup.actor != nullptr) << "KernelSetup without an actor";
  const std::string& op_type = setup.actor->kernel().op_type();
  const std::string context = plan::ActorLabel(setup.actor->name());
  auto found = factories_.find(op_type);
  if (found == factories_.end()) {
    return NotFoundError(context + ": no kernel for op type '" + op_type + "'");
  }
  Status layouts = CheckLayouts(setup.actor->kernel());
  if (!layouts.ok()) return layouts.WithContext(context);
  StatusOr<std::unique_ptr<Kernel>> kernel = found->second(setup);
  if (!kernel.ok()) return kernel.status().WithContext(context);
  if (*kernel == nullptr) {
    return InternalError(context + ": kernel factory for '" + op_type + "' returned null");
  }
  return kernel;
}

}  // namespace runtime
}  // namespace softwire
