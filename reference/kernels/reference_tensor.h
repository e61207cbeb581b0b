// ReferenceTensor: a double-precision tensor for the reference kernels. int32 values (labels,
// ids) are stored as doubles too; they are exact.
#ifndef SOFTWIRE_REFERENCE_KERNELS_REFERENCE_TENSOR_H_
#define SOFTWIRE_REFERENCE_KERNELS_REFERENCE_TENSOR_H_

#include <vector>

#include "base/dtype.h"
#include "base/shape.h"

namespace softwire {
namespace reference {

struct ReferenceTensor {
  DType dtype = DType::kFloat32;  // The dtype the tensor has in the plan.
  Shape shape;
  std::vector<double> values;  // shape.NumElements() values, row-major.
};

}  // namespace reference
}  // namespace softwire

#endif  // SOFTWIRE_REFERENCE_KERNELS_REFERENCE_TENSOR_H_
