// Peak resident memory of a short `softwire run` stays within the plan's planned bytes plus a
// small constant (issue 14, item 5): the arena is the only memory that grows with the job.
// (`run` no longer reads the variables' final values out of the arena unless `--save` asks.)
//
// Two measures. The process's own memory, anonymous pages (RssAnon: heap, stacks, the arena,
// the libraries' written data), peaks within planned + 8 MiB, the constant: 5.7-5.9
// MiB over planned measured on the MLP bench job and charlm, 2026-11-28 (before a product
// epilogue's rows landed in an output of the fused actor, charlm held a 4 MiB scratch outside
// the plan). The kernel keeps no high-water mark of anonymous memory alone, so the test samples
// /proc/PID/status every millisecond: the arena is held from the first step to the last, so
// the samples see it; a spike shorter than a millisecond may escape them.
//
// And the whole resident set (ru_maxrss from wait4, the kernel's high-water mark), which adds
// the code pages of the binary and its shared libraries that a run touches: measured in the
// same test run as the peak RSS of the tiny job of cli/testing (an arena of about 1 KiB):
// 27.3-29.3 MiB (BENCHMARKS.md, "Memory: the report, peak RSS and PyTorch": the binary 4-5
// MiB, libcrypto 3.1, protobuf 2.2, oneDNN 2.2, gRPC 2.1, CAF 1.9, OpenBLAS 1.7, libstdc++
// 1.5, libc 1.5, ...), file pages no plan can shrink. kFixedOverheadCeiling bounds it and
// kSlack covers what else a job allocates outside the arena (the plan, the actors, the
// compiler's heap that the allocator keeps, OpenBLAS's packing of larger matrices).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

namespace softwire {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMiB = int64_t{1} << 20;
// The tiny job's peak RSS (see the file comment): 29.3 MiB measured, plus 2 MiB.
constexpr int64_t kFixedOverheadCeiling = 31 * kMiB;
// What else a job allocates outside the arena: 4.8 MiB at most measured, plus about 1 MiB.
constexpr int64_t kSlack = 6 * kMiB;
// The constant: anonymous memory beyond planned bytes.
constexpr int64_t kAnonymousSlack = 8 * kMiB;

struct Usage {
  int exit_code = -1;
  int64_t max_rss_bytes = 0;
  int64_t max_anonymous_bytes = 0;  // The largest RssAnon sampled.
};

// RssAnon of a live process, bytes; 0 when it cannot be read (the process has exited).
int64_t AnonymousResidentBytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("RssAnon:", 0) == 0) return std::atoll(line.c_str() + 8) * 1024;
  }
  return 0;
}

// Runs the binary with `args` and waits for it; its peak resident set size.
Usage RunMeasured(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  std::string binary = SOFTWIRE_BINARY;
  argv.push_back(binary.data());
  std::vector<std::string> copies = args;
  for (std::string& arg : copies) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);  // Else the child's freopen writes the parent's pending output again.
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
  if (child < 0) return usage;
  // Sampled until it exits; the test's own time bound (ctest's) ends a run that hangs.
  for (;;) {
    const pid_t waited = ::wait4(child, &status, WNOHANG, &resources);
    if (waited == child) break;
    if (waited < 0) return usage;
    usage.max_anonymous_bytes = std::max(usage.max_anonymous_bytes, AnonymousResidentBytes(child));
    ::usleep(1000);
  }
  usage.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  usage.max_rss_bytes = static_cast<int64_t>(resources.ru_maxrss) * 1024;  // Linux: KiB.
  return usage;
}

struct Planned {
  int64_t bytes = 0;  // Every device's planned_bytes.
};

Planned PlannedBytes(const std::string& path) {
  StatusOr<compiler::JobFile> job = compiler::ParseJobFile(path);
  CHECK(job.ok()) << job.status();
  StatusOr<proto::Plan> plan = compiler::CompileJob(*job, compiler::CompileOptions());
  CHECK(plan.ok()) << plan.status();
  Planned planned;
  for (const proto::PlanDevice& device : plan->device()) {
    planned.bytes += device.planned_bytes();
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

  // `softwire run PATH --steps STEPS --quiet`: its anonymous memory at most planned bytes +
  // kAnonymousSlack; its peak RSS at most planned bytes, the fixed overhead (the tiny job's
  // peak in this run) and `slack`.
  void ExpectWithinPlanned(const std::string& path, int steps, int64_t slack) {
    const int64_t planned = PlannedBytes(path).bytes;
    const Usage usage = RunMeasured({"run", path, "--steps", std::to_string(steps), "--quiet"});
    ASSERT_EQ(usage.exit_code, 0) << path;
    std::printf(
        "%s: planned %.1f MiB, peak anonymous %.1f MiB (%.1f above planned), peak RSS %.1f MiB "
        "(%.1f above planned)\n",
        path.c_str(), static_cast<double>(planned) / kMiB,
        static_cast<double>(usage.max_anonymous_bytes) / kMiB,
        static_cast<double>(usage.max_anonymous_bytes - planned) / kMiB,
        static_cast<double>(usage.max_rss_bytes) / kMiB,
        static_cast<double>(usage.max_rss_bytes - planned) / kMiB);
    EXPECT_LE(usage.max_anonymous_bytes, planned + kAnonymousSlack) << path;
    EXPECT_LE(usage.max_rss_bytes, planned + FixedOverhead() + slack) << path;
    // The arena is touched in full: a peak below planned would mean it was not allocated.
    EXPECT_GE(usage.max_anonymous_bytes, planned) << path;
  }

  std::string directory_;
};

TEST_F(PeakMemoryTest, TheTinyJobsPeakIsTheFixedOverhead) {
  const std::string path = directory_ + "/tiny.pbtxt";
  ASSERT_TRUE(WriteFileAtomically(path, cli_testing::kTinyJob).ok());
  const Usage usage = RunMeasured({"run", path, "--steps", "4", "--quiet"});
  ASSERT_EQ(usage.exit_code, 0);
  std::printf("tiny job: peak RSS %.1f MiB, peak anonymous %.1f MiB\n",
              static_cast<double>(usage.max_rss_bytes) / kMiB,
              static_cast<double>(usage.max_anonymous_bytes) / kMiB);
  EXPECT_LE(usage.max_rss_bytes, kFixedOverheadCeiling);
  EXPECT_LE(usage.max_anonymous_bytes, PlannedBytes(path).bytes + kAnonymousSlack);
  EXPECT_GE(usage.max_rss_bytes, PlannedBytes(path).bytes);
}

TEST_F(PeakMemoryTest, TheMlpBenchJobStaysWithinPlannedPlusTheOverhead) {
  ExpectWithinPlanned("bench/training/mlp.pbtxt", 5, kSlack);
}

TEST_F(PeakMemoryTest, TheFlagshipTransformerStaysWithinPlannedPlusTheOverhead) {
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
