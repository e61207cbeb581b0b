// relu, relu_grad, add and add_n on bfloat16 operands of one shape (docs/PRECISION.md,
// activations kept in bf16 between convolutions): each element is widened to float32, computed
// as the float32 kernels compute it, and rounded once to bfloat16 as it is stored. add_n adds
// in input order in float32 and rounds the sum once. No broadcasting (the compiler gives add
// bfloat16 operands of one shape only). Any layout, as the float32 kernels (every operand the
// same dims and layout: kernel_registry.cc checks it).
//
// The float32 kernels' factories hand a KernelDef whose input 0 is bfloat16 to
// CreateBFloat16ElementwiseKernel; it checks the whole signature (every operand bfloat16, one
// shape) and fails naming the operand at fault.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_BFLOAT16_ELEMENTWISE_KERNELS_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_BFLOAT16_ELEMENTWISE_KERNELS_H_

#include <memory>

#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {

// Whether input 0 of `def` is bfloat16.
bool ReadsBFloat16(const proto::KernelDef& def);

// The bfloat16 kernel of relu, relu_grad, add or add_n.
StatusOr<std::unique_ptr<Kernel>> CreateBFloat16ElementwiseKernel(const KernelSetup& setup);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_BFLOAT16_ELEMENTWISE_KERNELS_H_
