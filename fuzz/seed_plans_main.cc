// Writes the plan checker's seed plans (fuzz/make-seed-corpus runs it): each job file named on
// the command line compiled for the cluster shorthand of its "# cluster: SPEC" line (else one
// cpu device) and written, serialized, to OUT_FOLDER/<job name>.plan.pb.
//
//   fuzz_seed_plans OUT_FOLDER tests/compiler/golden/mlp_tiny_dp2.pbtxt ...
#include <fstream>
#include <iostream>
#include <string>

#include "base/file.h"
#include "compiler/compiler.h"
#include "placement/cluster_spec.h"

namespace softwire {
namespace {

// The "# cluster: SPEC" header line of a job file, if any.
std::string ClusterLine(const std::string& text) {
  const std::string key = "# cluster: ";
  size_t at = text.find(key);
  if (at == std::string::npos) return "";
  size_t end = text.find('\n', at);
  return text.substr(at + key.size(), end == std::string::npos ? end : end - at - key.size());
}

Status WriteSeedPlan(const std::string& out_folder, const std::string& job_path) {
  SOFTWIRE_ASSIGN_OR_RETURN(std::string text, ReadFile(job_path));
  SOFTWIRE_ASSIGN_OR_RETURN(compiler::JobFile job_file, compiler::ParseJobFile(job_path));
  compiler::CompileOptions options;
  const std::string cluster = ClusterLine(text);
  if (!cluster.empty()) {
    SOFTWIRE_ASSIGN_OR_RETURN(options.cluster, placement::ParseClusterShorthand(cluster, 8));
  }
  SOFTWIRE_ASSIGN_OR_RETURN(proto::Plan plan, compiler::CompileJob(job_file, options));
  std::string name = job_path.substr(job_path.find_last_of('/') + 1);
  name = name.substr(0, name.find('.'));
  return WriteFileAtomically(out_folder + "/" + name + ".plan.pb", plan.SerializeAsString());
}

}  // namespace
}  // namespace softwire

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: " << argv[0] << " OUT_FOLDER JOB.pbtxt...\n";
    return 2;
  }
  int failed = 0;
  for (int i = 2; i < argc; ++i) {
    softwire::Status written = softwire::WriteSeedPlan(argv[1], argv[i]);
    if (!written.ok()) {
      std::cerr << argv[i] << ": " << written.message() << "\n";
      ++failed;
    }
  }
  return failed == 0 ? 0 : 1;
}
