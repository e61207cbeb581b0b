// The compiler's IRs as stable text, one line per op, task or register: what
// CompileOptions.dump_after writes, and what unit tests compare.
#ifndef SOFTWIRE_COMPILER_IR_GRAPH_TEXT_H_
#define SOFTWIRE_COMPILER_IR_GRAPH_TEXT_H_

#include <string>

#include "compiler/ir/logical_graph.h"
#include "compiler/ir/task_graph.h"

namespace softwire {
namespace compiler {

// Ops in id order:
//   op 3 'fc1' = matmul(x: float32[8, 64], w1: float32[64, 128]) -> (h1: float32[8, 128])
//       {transpose_a: false, transpose_b: false} period 1 device 0
// Unset annotations are left out.
std::string LogicalGraphToText(const LogicalGraph& graph);

// Tasks in id order, then registers in id order.
std::string TaskGraphToText(const TaskGraph& tasks);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_IR_GRAPH_TEXT_H_
