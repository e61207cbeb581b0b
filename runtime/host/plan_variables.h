// A finished run's trained variables: read out of a hosted plan's registers, stitched into
// their logical shapes, and saved as .npy files. `softwire run --save DIR` (through RunPlan) and
// the job service (service/, a job's results/variables/) both use these.
//
//   StatusOr<std::map<std::string, NpyArray>> variables = ReadHostedVariables(*hosted);
//   Status saved = SaveVariables("out", *variables);   // out/fc1.weight.npy, ...
//
// Threading: ReadHostedVariables only while no execution of the hosted plan runs.
#ifndef SOFTWIRE_RUNTIME_HOST_PLAN_VARIABLES_H_
#define SOFTWIRE_RUNTIME_HOST_PLAN_VARIABLES_H_

#include <map>
#include <string>

#include "base/npy.h"
#include "base/status.h"
#include "runtime/host/hosted_plan.h"

namespace softwire {
namespace runtime {

// Every variable of `hosted`'s plan as its last run left it (ReadVariables, plan_edits.h).
// Variables with a part on a sim device are left out.
StatusOr<std::map<std::string, NpyArray>> ReadHostedVariables(const HostedPlan& hosted);

// "w1" -> "DIR/w1.npy". Names may hold '/' (a folder per scope) but no "." or ".." part and no
// leading '/', so every file stays inside DIR: InvalidArgument otherwise.
StatusOr<std::string> VariableFilePath(const std::string& directory, const std::string& name);

// Writes each variable to VariableFilePath(directory, name), making folders as needed.
Status SaveVariables(const std::string& directory,
                     const std::map<std::string, NpyArray>& variables);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_PLAN_VARIABLES_H_
