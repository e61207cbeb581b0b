#include "reference/kernels/reference_kernels.h"

#include <glog/logging.h>

#include "base/bfloat16.h"
#include "reference/kernels/reference_kernel_families.h"

namespace softwire {
namespace reference {

void ReferenceKernelTable::Register(const std::string& op_type, ReferenceKernel kernel) {
  CHECK(kernel) << "reference kernel for '" << op_type << "' is empty";
  bool inserted = kernels_.emplace(op_type, std::move(kernel)).second;
  CHECK(inserted) << "reference kernel for '" << op_type << "' registered twice";
}

bool ReferenceKernelTable::Contains(const std::string& op_type) const {
  return kernels_.count(op_type) > 0;
}

std::vector<std::string> ReferenceKernelTable::OpTypes() const {
  std::vector<std::string> op_types;
  for (const auto& entry : kernels_) op_types.push_back(entry.first);
  return op_types;
}

Status ReferenceKernelTable::Run(const ReferenceKernelCall& call) const {
  CHECK(call.def != nullptr) << "reference kernel call without a KernelDef";
  auto found = kernels_.find(call.def->op_type());
  if (found == kernels_.end()) {
    return NotFoundError("no reference kernel for op type '" + call.def->op_type() + "'");
  }
  SOFTWIRE_RETURN_IF_ERROR(found->second(call));
  // A bfloat16 output is stored rounded (the engine's kernels compute in float32 and round
  // once as they store): the reference rounds its double result once, whatever the op
  // (docs/PRECISION.md, activations kept in bf16 between convolutions).
  for (ReferenceTensor& output : *call.outputs) {
    if (output.dtype != DType::kBFloat16) continue;
    for (double& value : output.values) value = RoundToBFloat16(value);
  }
  return Status::Ok();
}

ReferenceKernelTable MakeReferenceKernels() {
  ReferenceKernelTable table;
  RegisterReferenceMatmulKernels(&table);
  RegisterReferenceElementwiseKernels(&table);
  RegisterReferenceSoftmaxKernels(&table);
  RegisterReferenceLayerNormKernels(&table);
  RegisterReferenceReductionKernels(&table);
  RegisterReferenceGatherKernels(&table);
  RegisterReferenceOptimizerKernels(&table);
  RegisterReferenceTransferKernels(&table);
  RegisterReferenceCastKernel(&table);
  RegisterReferenceConvolutionKernels(&table);
  RegisterReferencePoolingKernels(&table);
  RegisterReferenceBatchNormKernels(&table);
  RegisterReferenceFusedKernel(&table);  // Last: it runs its statements through the others.
  return table;
}

}  // namespace reference
}  // namespace softwire
