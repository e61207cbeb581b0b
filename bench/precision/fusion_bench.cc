// fusion_bench: what each fused actor of a job's training step costs against the actors it
// replaces, kernels alone. It compiles the job twice as `softwire run` does (--precision float32
// or bf16): with op fusion (the default) and with --no-fusion. Each fused actor of the first plan
// is a site; the second plan computes the same site with one actor per member (the names the
// fused actor joins with '+'). Each round runs every site's fused kernel and then its members'
// kernels back to back (the order alternating between rounds) on a 2-thread pool with BLAS on
// the calling threads, as often as they fire in a step. No actors, no messages.
//
//   fusion_bench JOB [--precision float32|bf16] [--steps 40] [--threads 2]
//
// Prints one JSON line per site, slowest against its members first: {"site", "program",
// "fused_us", "members_us", "ratio"} (medians over --steps rounds after 3 warm-up rounds; ratio:
// members / fused, below 1 where fusion is slower), then a total line {"job", "precision",
// "sites", "fused_ms", "members_ms", "ratio"}.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/precision/actor_kernel.h"
#include "compiler/compiler.h"
#include "proto/tensor_desc.h"
#include "runtime/device/cpu/thread_pool_runner.h"
#include "runtime/kernels/cpu/cpu_kernels.h"

namespace softwire {
namespace runtime {
namespace {

std::string ProgramOf(const proto::ActorDef& actor) {
  for (const proto::Attribute& attribute : actor.kernel().attr()) {
    if (attribute.name() == "program") return attribute.string();
  }
  return "";
}

proto::Plan CompileWith(const compiler::JobFile& job, proto::Precision precision, bool fusion) {
  compiler::CompileOptions options;
  options.steps = 1;
  options.precision = precision;
  options.fuse_elementwise = fusion;
  StatusOr<proto::Plan> plan = compiler::CompileJob(job, options);
  CHECK(plan.ok()) << plan.status();
  return *std::move(plan);
}

std::vector<std::string> Members(const std::string& name) {
  std::vector<std::string> members;
  size_t begin = 0;
  for (size_t plus = name.find('+'); plus != std::string::npos; plus = name.find('+', begin)) {
    members.push_back(name.substr(begin, plus - begin));
    begin = plus + 1;
  }
  members.push_back(name.substr(begin));
  return members;
}

struct Site {
  std::string name;
  std::string program;
  std::vector<ActorKernel> fused;    // One kernel.
  std::vector<ActorKernel> members;  // The unfused plan's actors, in chain order.
  std::vector<double> fused_seconds;
  std::vector<double> members_seconds;
};

int Main(int argc, char** argv) {
  const std::optional<KernelBenchFlags> flags =
      ParseKernelBenchFlags(argc, argv, "fusion_bench", 40, "rounds timed");
  if (!flags) return 2;
  const std::string& job_path = flags->job_path;
  const std::string& precision = flags->precision;
  const int64_t steps = flags->steps;
  const int64_t threads = flags->threads;
  StatusOr<compiler::JobFile> job = compiler::ParseJobFile(job_path);
  CHECK(job.ok()) << job.status();
  const proto::Precision type = flags->type;
  const proto::Plan fused_plan = CompileWith(*job, type, true);
  const proto::Plan unfused_plan = CompileWith(*job, type, false);
  std::map<std::string, const proto::ActorDef*> unfused_by_name;
  for (const proto::ActorDef& actor : unfused_plan.actor()) unfused_by_name[actor.name()] = &actor;

  RunBlasOnCallingThreads();  // As a NodeRuntime's cpu devices run products.
  ThreadPoolRunner runner(static_cast<int>(threads));
  KernelRegistry registry;
  RegisterCpuKernels(&registry);
  std::vector<Site> sites;
  uint64_t seed = 1;
  for (const proto::ActorDef& actor : fused_plan.actor()) {
    if (actor.kernel().op_type() != "fused") continue;
    Site site;
    site.name = actor.name();
    site.program = ProgramOf(actor);
    site.fused.push_back(PrepareActorKernel(fused_plan, actor, registry, &runner, &seed));
    for (const std::string& member : Members(actor.name())) {
      const auto found = unfused_by_name.find(member);
      CHECK(found != unfused_by_name.end())
          << actor.name() << ": no actor " << member << " without fusion";
      site.members.push_back(
          PrepareActorKernel(unfused_plan, *found->second, registry, &runner, &seed));
    }
    sites.push_back(std::move(site));
  }
  CHECK(!sites.empty()) << job_path << " has no fused actor";
  for (int step = -3; step < steps; ++step) {  // 3 warm-up rounds.
    for (Site& site : sites) {
      double fused = 0;
      double members = 0;
      if (step % 2 == 0) {
        fused = StepSeconds(site.fused);
        members = StepSeconds(site.members);
      } else {
        members = StepSeconds(site.members);
        fused = StepSeconds(site.fused);
      }
      if (step < 0) continue;
      site.fused_seconds.push_back(fused);
      site.members_seconds.push_back(members);
    }
  }
  std::sort(sites.begin(), sites.end(), [](const Site& a, const Site& b) {
    return Median(a.members_seconds) / Median(a.fused_seconds) <
           Median(b.members_seconds) / Median(b.fused_seconds);
  });
  double fused_total = 0;
  double members_total = 0;
  for (const Site& site : sites) {
    const double fused = Median(site.fused_seconds);
    const double members = Median(site.members_seconds);
    fused_total += fused;
    members_total += members;
    std::printf(
        "{\"site\": \"%s\", \"program\": \"%s\", \"fused_us\": %.1f, \"members_us\": %.1f, "
        "\"ratio\": %.3f}\n",
        site.name.c_str(), site.program.c_str(), fused * 1e6, members * 1e6, members / fused);
  }
  std::printf(
      "{\"job\": \"%s\", \"precision\": \"%s\", \"sites\": %zu, \"fused_ms\": %.4f, "
      "\"members_ms\": %.4f, \"ratio\": %.4f}\n",
      fused_plan.job_name().c_str(), precision.c_str(), sites.size(), fused_total * 1e3,
      members_total * 1e3, members_total / fused_total);
  return 0;
}

}  // namespace
}  // namespace runtime
}  // namespace softwire

int main(int argc, char** argv) {
  return softwire::runtime::Main(argc, argv);
}
