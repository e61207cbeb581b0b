// Peak resident memory of a short `softwire run` stays within the plan's planned bytes plus a
// fixed overhead and one more copy of the weights (issue 14, item 5): the arena is the only
// memory that grows with the job, besides the variables' final values, which `run` reads out of
// the arena at the end (RunResult::variables) while the arena is still allocated.
//
// The fixed overhead is what the process holds whatever the job, measured in the same test run
// as the peak RSS of the tiny job of cli/testing (an arena of about 1 KiB): 27.3-28.2 MiB on
// 2026-11-25, 29.3 MiB on 2026-11-28 (a larger binary), almost all of it the code
// pages of the binary and its shared libraries that a run touches (BENCHMARKS.md, "Memory: the
// report, peak RSS and PyTorch": the binary 4.1 MiB, libcrypto 3.1, protobuf 2.2, oneDNN 2.2,
// gRPC 2.1, CAF 1.9, OpenBLAS 1.7, libstdc++ 1.5, libc 1.5, ...; heap and small anonymous
// mappings 1.7). That is well above the 8 MiB; kFixedOverheadCeiling bounds it, and
// kSlack covers what else a job allocates outside the arena (the plan, the actors, the
// compiler's heap that the allocator keeps, OpenBLAS's packing of larger matrices): 1-1.5 MiB
// measured on 2026-11-25, 2.4 MiB (MLP) and 4.8 MiB (charlm) on 2026-11-28.
//
// Peak RSS is the child's ru_maxrss from wait4: the kernel's high-water mark of the whole
// process, not a sample.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "base/file.h"
#include "cli/testing/softwire_process.h"
#include "compiler/compiler.h"
#include "plan/memory_breakdown.h"

namespace softwire {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMiB = int64_t{1} << 20;
// The tiny job's peak RSS (see the file comment): 29.3 MiB measured, plus 2 MiB.
constexpr int64_t kFixedOverheadCeiling = 31 * kMiB;
// What else a job allocates outside the arena and the final copy of its weights: 4.8 MiB at
// most measured, plus about 1 MiB.
constexpr int64_t kSlack = 6 * kMiB;

struct Usage {
  int exit_code = -1;
  int64_t max_rss_bytes = 0;
};

// Runs the binary with `args` and waits for it; its peak resident set size.
Usage RunMeasured(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  std::string binary = SOFTWIRE_BINARY;
  argv.push_back(binary.data());
  std::vector<std::string> copies = args;
  for (std::string& arg : copies) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    std::FILE* null = std::freopen("/dev/null", "w", stdout);
    (void)null;
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  Usage usage;
  int status = 0;
  struct rusage resources {};
  if (child < 0 || ::wait4(child, &status, 0, &resources) != child) return usage;
  usage.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  usage.max_rss_bytes = static_cast<int64_t>(resources.ru_maxrss) * 1024;  // Linux: KiB.
  return usage;
}

struct Planned {
  int64_t bytes = 0;    // Every device's planned_bytes.
  int64_t weights = 0;  // Of those, the variables' (plan/memory_breakdown.h).
};

Planned PlannedBytes(const std::string& path) {
  StatusOr<compiler::JobFile> job = compiler::ParseJobFile(path);
  CHECK(job.ok()) << job.status();
  StatusOr<proto::Plan> plan = compiler::CompileJob(*job, compiler::CompileOptions());
  CHECK(plan.ok()) << plan.status();
  Planned planned;
  for (const proto::PlanDevice& device : plan->device()) {
    planned.bytes += device.planned_bytes();
    planned.weights += plan::BreakDownMemory(*plan, device.id()).weights;
  }
  return planned;
}

class PeakMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "a sanitizer's shadow memory is no part of what a run holds";
#endif
    char pattern[] = "/tmp/softwire_peak_memory_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    directory_ = pattern;
  }
  void TearDown() override {
    fs::remove_all(directory_);
  }

  // The tiny job's peak RSS, measured once per test process: what a run holds whatever its job.
  static int64_t FixedOverhead() {
    static const int64_t measured = [] {
      char pattern[] = "/tmp/softwire_peak_memory_tiny_XXXXXX";
      CHECK(::mkdtemp(pattern) != nullptr);
      const std::string path = std::string(pattern) + "/tiny.pbtxt";
      CHECK(WriteFileAtomically(path, cli_testing::kTinyJob).ok());
      const Usage usage = RunMeasured({"run", path, "--steps", "4", "--quiet"});
      fs::remove_all(pattern);
      CHECK_EQ(usage.exit_code, 0);
      return usage.max_rss_bytes;
    }();
    return measured;
  }

  // Peak RSS of `softwire run PATH --steps STEPS --quiet`: at most planned bytes, the fixed
  // overhead (the tiny job's peak in this run), the weights once more and `slack`.
  void ExpectWithinPlanned(const std::string& path, int steps, int64_t slack) {
    const Planned plan = PlannedBytes(path);
    const int64_t planned = plan.bytes;
    const Usage usage = RunMeasured({"run", path, "--steps", std::to_string(steps), "--quiet"});
    ASSERT_EQ(usage.exit_code, 0) << path;
    std::printf("%s: planned %.1f MiB, peak RSS %.1f MiB (%.1f MiB above planned)\n", path.c_str(),
                static_cast<double>(planned) / kMiB,
                static_cast<double>(usage.max_rss_bytes) / kMiB,
                static_cast<double>(usage.max_rss_bytes - planned) / kMiB);
    EXPECT_LE(usage.max_rss_bytes, planned + FixedOverhead() + plan.weights + slack) << path;
    // The arena is touched in full: a peak below planned would mean it was not allocated.
    EXPECT_GE(usage.max_rss_bytes, planned) << path;
  }

  std::string directory_;
};

TEST_F(PeakMemoryTest, TheTinyJobsPeakIsTheFixedOverhead) {
  const std::string path = directory_ + "/tiny.pbtxt";
  ASSERT_TRUE(WriteFileAtomically(path, cli_testing::kTinyJob).ok());
  const Usage usage = RunMeasured({"run", path, "--steps", "4", "--quiet"});
  ASSERT_EQ(usage.exit_code, 0);
  std::printf("tiny job: peak RSS %.1f MiB\n", static_cast<double>(usage.max_rss_bytes) / kMiB);
  EXPECT_LE(usage.max_rss_bytes, kFixedOverheadCeiling);
  EXPECT_GE(usage.max_rss_bytes, PlannedBytes(path).bytes);
}

TEST_F(PeakMemoryTest, TheMlpBenchJobStaysWithinPlannedPlusTheOverheadAndItsWeights) {
  ExpectWithinPlanned("bench/training/mlp.pbtxt", 5, kSlack);
}

TEST_F(PeakMemoryTest, TheFlagshipTransformerStaysWithinPlannedPlusTheOverheadAndItsWeights) {
  // The job reads data/licenses.txt beside it: any bytes do for memory.
  fs::create_directories(directory_ + "/data");
  std::string text(256 * 1024, ' ');
  std::mt19937 random(1);
  for (char& c : text) c = static_cast<char>('a' + random() % 26);
  ASSERT_TRUE(WriteFileAtomically(directory_ + "/data/licenses.txt", text).ok());
  const std::string path = directory_ + "/charlm.pbtxt";
  fs::copy_file("demos/charlm/charlm.pbtxt", path);
  ExpectWithinPlanned(path, 5, kSlack);
}

}  // namespace
}  // namespace softwire
