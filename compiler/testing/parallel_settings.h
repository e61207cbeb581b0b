// The parallel layouts the compiler's parallel suites compile the example jobs under, and the
// CompileOptions for one of them.
//
//   for (const ParallelSetting& setting : kParallelSettings) {
//     StatusOr<proto::Plan> plan = CompileJob(job, ParallelOptions(setting, setting.Devices()));
//   }
//
// Test-only (softwire_compiler_test_util).
#ifndef SOFTWIRE_COMPILER_TESTING_PARALLEL_SETTINGS_H_
#define SOFTWIRE_COMPILER_TESTING_PARALLEL_SETTINGS_H_

#include <ostream>

#include "compiler/compiler.h"

namespace softwire {
namespace compiler {

// Degrees of data, tensor and pipeline parallelism, named for test names ("dp2_tp2").
struct ParallelSetting {
  const char* name;
  int dp;
  int tp;
  int pp;

  // The devices a plan of this setting occupies: dp * tp * pp.
  int Devices() const { return dp * tp * pp; }
};

// gtest prints a setting by its name.
void PrintTo(const ParallelSetting& setting, std::ostream* out);

// dp2, dp4, tp2, pp2, pp4, dp2_pp2, dp2_tp2, dp2_tp2_pp2: each degree alone and combined, on up
// to 8 devices (parallel_jobs_test and parallel_equivalence_test run every example job under
// each).
extern const ParallelSetting kParallelSettings[8];

// Options for a cluster of `cpu_devices` cpu devices on one node (an 8-core machine's cores
// divided among them, ParseClusterShorthand("<N>cpu", 8)) with the setting's degrees; the
// other options at their defaults. `cpu_devices` must be >= setting.Devices().
CompileOptions ParallelOptions(const ParallelSetting& setting, int cpu_devices);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_TESTING_PARALLEL_SETTINGS_H_
