// Runs one reference kernel outside any plan, for tests: builds the KernelDef from the tensors
// and attributes, sizes the outputs, and calls the table.
//
//   StatusOr<std::vector<ReferenceTensor>> y =
//       RunReferenceKernel(table, "relu", {}, {x}, {x.shape});
#ifndef SOFTWIRE_REFERENCE_KERNELS_TESTING_REFERENCE_KERNEL_RUNNER_H_
#define SOFTWIRE_REFERENCE_KERNELS_TESTING_REFERENCE_KERNEL_RUNNER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/kernel_attributes.h"  // The attribute builders tests use with it.
#include "proto/plan.pb.h"
#include "reference/kernels/reference_kernels.h"

namespace softwire {
namespace reference {

// A float32 tensor of `shape` holding `values` (NumElements of them).
ReferenceTensor FloatTensor(const Shape& shape, std::vector<double> values);
// An int32 tensor (labels, ids).
ReferenceTensor IntTensor(const Shape& shape, std::vector<double> values);

// Outputs are float32 of `output_shapes`, zero before the call. For optimizers pass `state`
// and `step`, and the current weight as the single output's initial value in
// `initial_outputs`.
StatusOr<std::vector<ReferenceTensor>> RunReferenceKernel(
    const ReferenceKernelTable& table, const std::string& op_type,
    const std::vector<proto::Attribute>& attributes, const std::vector<ReferenceTensor>& inputs,
    const std::vector<Shape>& output_shapes, std::vector<double>* state = nullptr, int64_t step = 0,
    const std::vector<ReferenceTensor>& initial_outputs = {});

}  // namespace reference
}  // namespace softwire

#endif  // SOFTWIRE_REFERENCE_KERNELS_TESTING_REFERENCE_KERNEL_RUNNER_H_
