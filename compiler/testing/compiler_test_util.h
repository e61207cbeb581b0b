// Helpers shared by the compiler's tests (unit tests beside the code and tests/compiler/).
// Test-only: linked into test binaries, never into the compiler library.
#ifndef SOFTWIRE_COMPILER_TESTING_COMPILER_TEST_UTIL_H_
#define SOFTWIRE_COMPILER_TESTING_COMPILER_TEST_UTIL_H_

#include <memory>
#include <string>

#include "base/status.h"
#include "compiler/compilation.h"
#include "compiler/compiler.h"
#include "compiler/ops/op_registry.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace compiler {

// One node "node0" with one cpu "cpu:0" of 2 cores and `memory_bytes` (0: unlimited), so plans
// do not depend on the machine the tests run on.
proto::Cluster OneCpuCluster(int64_t memory_bytes = 0);

// The cluster a test job's "# cluster: SHORTHAND" line names (e.g. "# cluster: 2x2cpu"), or
// OneCpuCluster() when it has none. CHECK-fails on a shorthand placement/ cannot parse.
proto::Cluster ClusterNamedIn(const std::string& job_text);

// Parses `text` as if it were the file "test.pbtxt" in the working directory and compiles it.
// Uses OneCpuCluster() unless `options` names a cluster.
StatusOr<proto::Plan> CompileJobText(const std::string& text, CompileOptions options = {});

// A compilation of job text that runs the standard passes one at a time, so tests can look at
// the graphs between passes.
class StagedCompilation {
 public:
  // CHECK-fails when `text` does not parse.
  explicit StagedCompilation(const std::string& text, CompileOptions options = {});

  // Runs the standard passes up to and including `last_pass` (each verified), or stops at the
  // first failure. CHECK-fails on an unknown pass name.
  Status RunThrough(const std::string& last_pass);

  Compilation& compilation() { return *compilation_; }
  const LogicalGraph& graph() const { return compilation_->graph; }

  // The op / tensor named `name`; CHECK-fails when absent.
  const LogicalOp& op(const std::string& name) const;
  const LogicalTensor& tensor(const std::string& name) const;
  bool has_op(const std::string& name) const { return graph().FindOp(name).has_value(); }
  // Names of the ops of `type`, in id order.
  std::vector<std::string> OpsOfType(const std::string& type) const;
  // "a, b" names of the tensors op `name` reads.
  std::string InputNames(const std::string& name) const;

 private:
  JobFile job_file_;
  CompileOptions options_;
  OpRegistry registry_;
  std::unique_ptr<Compilation> compilation_;
  size_t passes_run_ = 0;
};

// Runs the inference of op `type` on `inputs` with `attributes` completed by the schema (a
// schema failure is returned as is). The result has one type per output.
StatusOr<std::vector<TensorType>> InferOp(const OpRegistry& registry, const std::string& type,
                                          std::vector<TensorType> inputs,
                                          const AttributeMap& attributes = {});

// Shorthands for test tensor types.
TensorType F32(std::vector<int64_t> dims);
TensorType I32(std::vector<int64_t> dims);

// The fewest bytes per device the memory budget driver can reach for `job` under `options`
// (memory_budget.h): compiles against a 1 KiB budget on every device of `options.cluster`,
// which fails, and reads "the plan needs at least N bytes" from the error. -1 when the error is
// not that one.
int64_t LeastReachableBytes(const JobFile& job, CompileOptions options);

// `options.cluster` with every device's memory budget set to `memory_bytes`.
proto::Cluster WithMemoryBudget(proto::Cluster cluster, int64_t memory_bytes);

// The actor named `name`; null when absent.
const proto::ActorDef* FindActor(const proto::Plan& plan, const std::string& name);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_TESTING_COMPILER_TEST_UTIL_H_
