// Helpers for the tests that run the built `softwire` binary as a user would
// (softwire_command_test, softwire_trace_command_test).
//
//   WriteFile(dir + "/tiny.pbtxt", kTinyJob);
//   Outcome outcome = RunSoftwire(SOFTWIRE_BINARY, "run " + dir + "/tiny.pbtxt");
//   EXPECT_EQ(outcome.exit_code, 0);
#ifndef SOFTWIRE_CLI_TESTING_SOFTWIRE_PROCESS_H_
#define SOFTWIRE_CLI_TESTING_SOFTWIRE_PROCESS_H_

#include <string>

namespace softwire {
namespace cli_testing {

struct Outcome {
  int exit_code = -1;  // -1: the process could not be started or did not exit normally.
  std::string output;  // stdout and stderr together.
};

// Runs `BINARY ARGS` to its end with a 60 s bound (`timeout` kills a hung run: exit code 124).
Outcome RunSoftwire(const std::string& binary, const std::string& args);

bool Contains(const std::string& text, const std::string& part);

// The factor a test stretches its bounds on the engine's own speed by (a cancel within 2 s):
// SOFTWIRE_TEST_TIME_SCALE, which scripts/sanitize sets to 3 (instrumented builds run 2-10x
// slower); 1 when unset or not a number >= 1.
double TestTimeScale();

// A small training job (synthetic data, one matmul, softmax cross-entropy; 4 steps of 2
// micro-batches of 8), named "tiny": proto_testing::ClassifierJobText's defaults
// (proto/testing/classifier_job_text.h, which builds variants of it).
extern const std::string kTinyJob;

}  // namespace cli_testing
}  // namespace softwire

#endif  // SOFTWIRE_CLI_TESTING_SOFTWIRE_PROCESS_H_
