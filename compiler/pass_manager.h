// PassManager: runs an ordered list of passes over a Compilation through one wrapper that
// names, times, can dump, and re-verifies after every pass (DuckDB's optimizer does the same).
//
// A pass is a function `Status Pass(Compilation&)` in its own file under passes/; the order
// lives in one list, StandardPasses() (passes/passes.h).
//
//   PassManager manager(StandardPasses());
//   SOFTWIRE_RETURN_IF_ERROR(manager.Run(compilation));
//
// Threading: Run is const and may be called for different compilations concurrently.
#ifndef SOFTWIRE_COMPILER_PASS_MANAGER_H_
#define SOFTWIRE_COMPILER_PASS_MANAGER_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/compilation.h"

namespace softwire {
namespace compiler {

using PassFunction = Status (*)(Compilation&);

struct Pass {
  std::string name;  // e.g. "infer_shapes"; what CompileOptions.dump_after names.
  PassFunction run = nullptr;
};

struct PassTiming {
  std::string name;
  double milliseconds = 0;  // Wall time of the pass.
  // CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID: user and system), which a loaded
  // machine does not inflate as it does wall time: of the pass, and of the verification after it.
  double cpu_milliseconds = 0;
  double verify_cpu_milliseconds = 0;
};

class PassManager {
 public:
  explicit PassManager(std::vector<Pass> passes);

  // Runs every pass in order and stops at the first failure, returning the pass's own error.
  // After each pass:
  //  - Compilation::Verify(); a broken invariant is Internal "after pass 'x': ...";
  //  - with options().log_passes, writes "pass x: 0.42 ms" to std::clog;
  //  - when options().dump_after names the pass (or "all"), writes Compilation::Dump() to
  //    "<dump_directory>/<NN>-<pass>.txt" (NN is the pass's 1-based position).
  // InvalidArgument before any pass runs when dump_after names an unknown pass or
  // dump_directory is empty while dump_after is not. `timings`, when non-null, receives one
  // entry per pass that ran.
  Status Run(Compilation& compilation, std::vector<PassTiming>* timings = nullptr) const;

  const std::vector<Pass>& passes() const { return passes_; }

 private:
  Status CheckDumpOptions(const CompileOptions& options) const;
  bool ShouldDump(const CompileOptions& options, const std::string& pass) const;
  Status Dump(const Compilation& compilation, size_t index) const;

  std::vector<Pass> passes_;
};

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_PASS_MANAGER_H_
