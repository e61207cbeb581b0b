// Fuzz target: the job file parser and the compiler (compiler/compiler.h). Input: the text of a
// job file. It is parsed (ParseJobText) and compiled (CompileJob) for a fixed small cluster of
// two nodes of two cpu devices with 64 MiB each, so no job can plan gigabytes; when the plan
// compiles it is dumped and summarized as `softwire compile` does. Any text must give a Status
// or a plan, never a crash, a hang or a huge allocation.
#include <glog/logging.h>

#include <string>

#include "compiler/compiler.h"
#include "fuzz/fuzz_target.h"
#include "placement/cluster_spec.h"

namespace softwire {
namespace {

const proto::Cluster& FuzzCluster() {
  static const proto::Cluster* const cluster = [] {
    StatusOr<proto::Cluster> parsed = placement::ParseClusterShorthand("2x2cpu:64MiB", 2);
    CHECK(parsed.ok()) << parsed.status().message();
    return new proto::Cluster(*parsed);
  }();
  return *cluster;
}

void CompileText(const std::string& text) {
  StatusOr<compiler::JobFile> job_file = compiler::ParseJobText(text, "fuzz.pbtxt", ".");
  if (!job_file.ok()) return;
  compiler::CompileOptions options;
  options.cluster = FuzzCluster();
  StatusOr<proto::Plan> plan = compiler::CompileJob(*job_file, options);
  if (!plan.ok()) return;
  compiler::DumpPlan(*plan);
  compiler::SummarizePlan(*plan);
}

}  // namespace
}  // namespace softwire

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  softwire::CompileText(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
