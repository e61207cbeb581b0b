// Checks of the job's declarations that need no graph: sources and variables. Used by
// build_graph; kept apart so that pass reads as the graph construction it is.
//
// Each returns InvalidArgument with a message that names the block and the field, without
// location; the caller prefixes "file:LINE: ".
#ifndef SOFTWIRE_COMPILER_PASSES_JOB_DECLARATIONS_H_
#define SOFTWIRE_COMPILER_PASSES_JOB_DECLARATIONS_H_

#include <cstdint>

#include "base/status.h"
#include "compiler/ir/tensor_type.h"
#include "proto/job.pb.h"

namespace softwire {
namespace compiler {

// "source 'data': output 'x' has sample_dims [0]; extents must be >= 1", and the like for a
// missing name or dataset, npy path counts, synthetic int_high and text windows.
Status CheckSource(const proto::DataSource& source);

// The type of one micro-batch of `output`: [micro_batch_size, sample_dims...].
TensorType SourceOutputType(const proto::SourceOutput& output, int64_t micro_batch_size);

// "variable 'w1': initializer is not set", and the like for dtype, dims, trainable int32
// variables and initializer parameters.
Status CheckVariable(const proto::Variable& variable);

TensorType VariableType(const proto::Variable& variable);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_PASSES_JOB_DECLARATIONS_H_
