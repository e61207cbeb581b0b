#include "compiler/pass_manager.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <utility>

#include "base/file.h"

namespace softwire {
namespace compiler {

PassManager::PassManager(std::vector<Pass> passes) : passes_(std::move(passes)) {
  for (const Pass& pass : passes_) {
    CHECK(pass.run != nullptr) << "pass '" << pass.name << "' has no function";
  }
}

Status PassManager::CheckDumpOptions(const CompileOptions& options) const {
  if (options.dump_after.empty()) return Status::Ok();
  if (options.dump_directory.empty()) {
    return InvalidArgumentError("dump_after is set but dump_directory is empty");
  }
  for (const std::string& name : options.dump_after) {
    bool known = name == "all" || std::any_of(passes_.begin(), passes_.end(),
                                              [&](const Pass& pass) { return pass.name == name; });
    if (known) continue;
    std::string names;
    for (const Pass& pass : passes_) names += (names.empty() ? "" : ", ") + pass.name;
    return InvalidArgumentError("dump_after names unknown pass '" + name + "' (passes: " + names +
                                ", or all)");
  }
  return MakeDirectories(options.dump_directory);
}

bool PassManager::ShouldDump(const CompileOptions& options, const std::string& pass) const {
  return std::any_of(options.dump_after.begin(), options.dump_after.end(),
                     [&](const std::string& name) { return name == pass || name == "all"; });
}

Status PassManager::Dump(const Compilation& compilation, size_t index) const {
  char prefix[16];
  std::snprintf(prefix, sizeof(prefix), "%02zu-", index + 1);
  std::string path =
      compilation.options().dump_directory + "/" + prefix + passes_[index].name + ".txt";
  return WriteFileAtomically(path, compilation.Dump());
}

namespace {

double ThreadCpuMilliseconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) * 1e-6;
}

}  // namespace

Status PassManager::Run(Compilation& compilation, std::vector<PassTiming>* timings) const {
  const CompileOptions& options = compilation.options();
  SOFTWIRE_RETURN_IF_ERROR(CheckDumpOptions(options));
  for (size_t index = 0; index < passes_.size(); ++index) {
    const Pass& pass = passes_[index];
    auto start = std::chrono::steady_clock::now();
    const double cpu_start = ThreadCpuMilliseconds();
    SOFTWIRE_RETURN_IF_ERROR(pass.run(compilation));
    double milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const double cpu_pass_end = ThreadCpuMilliseconds();
    if (options.log_passes) {
      char line[128];
      std::snprintf(line, sizeof(line), "pass %s: %.3f ms\n", pass.name.c_str(), milliseconds);
      std::clog << line;
    }
    Status verified = compilation.Verify();
    if (timings != nullptr) {
      timings->push_back({pass.name, milliseconds, cpu_pass_end - cpu_start,
                          ThreadCpuMilliseconds() - cpu_pass_end});
    }
    if (!verified.ok()) {
      return InternalError("after pass '" + pass.name + "': " + verified.message());
    }
    if (ShouldDump(options, pass.name)) SOFTWIRE_RETURN_IF_ERROR(Dump(compilation, index));
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
