// Initial values of variables. Any part (a slice along one axis) of a variable can be produced
// alone, with exactly the values it has in the whole variable: random initializers are
// counter-based (base/random.h), indexed by the element's position in the logical variable.
#ifndef SOFTWIRE_DATA_INITIALIZER_H_
#define SOFTWIRE_DATA_INITIALIZER_H_

#include <cstdint>
#include <string>

#include "base/shape.h"
#include "base/status.h"
#include "base/tensor_view.h"
#include "data/data_root.h"
#include "proto/job.pb.h"

namespace softwire {
namespace data {

// Which part of a logical variable to produce: on `split_axis` the range [begin, end);
// split_axis -1 means the whole variable.
struct VariablePart {
  int split_axis = -1;
  int64_t begin = 0;
  int64_t end = 0;
};

// Writes the initial value of `part` of a variable of shape `logical_shape` into `output`
// (shaped like the part; float32, or int32 for frozen int32 variables, which take constant and
// npy initializers only). npy paths resolve under `data_root` (ResolveDataPath); the file's shape
// must equal `logical_shape` and its dtype the variable's. Errors name the file or the initializer
// field. Thread-safe (no shared state); reads the npy file on every call.
//
// Element i of the whole variable (row-major) is, by initializer:
//   constant: value
//   normal:   mean + stddev * NormalAt(seed, i)
//   uniform:  low + (high - low) * UniformAt(seed, i), kept below `high` after rounding
//   npy:      the file's element i
Status InitializeVariable(const proto::Initializer& initializer, const Shape& logical_shape,
                          const VariablePart& part, const DataRoot& data_root,
                          const TensorView& output);

}  // namespace data
}  // namespace softwire

#endif  // SOFTWIRE_DATA_INITIALIZER_H_
