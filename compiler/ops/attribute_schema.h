// Checks an op's attributes against its definition's schema and fills in defaults.
//
// The result lists every schema attribute in schema order, so later passes and the plan see
// complete, stable attribute lists.
#ifndef SOFTWIRE_COMPILER_OPS_ATTRIBUTE_SCHEMA_H_
#define SOFTWIRE_COMPILER_OPS_ATTRIBUTE_SCHEMA_H_

#include <vector>

#include "base/status.h"
#include "compiler/ir/attribute_map.h"
#include "compiler/ops/op_definition.h"
#include "proto/tensor.pb.h"

namespace softwire {
namespace compiler {

// For attributes written in a job. InvalidArgument naming the attribute when one is unknown
// ("attribute 'transpose' is not defined for op type 'matmul' (it has transpose_a,
// transpose_b)"), given twice, has no value, has the wrong kind ("attribute 'factor' must be a
// float, got int"), or a required one is missing.
StatusOr<AttributeMap> ResolveAttributes(const OpDefinition& definition,
                                         const std::vector<proto::Attribute>& given);

// For ops the compiler makes: the same checks on an AttributeMap. A failure is a compiler bug,
// so it is reported as Internal.
StatusOr<AttributeMap> CompleteAttributes(const OpDefinition& definition,
                                          const AttributeMap& given);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_OPS_ATTRIBUTE_SCHEMA_H_
