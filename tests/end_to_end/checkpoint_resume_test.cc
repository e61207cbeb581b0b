// Checkpoints and resume with the built `softwire`, as a user runs them: a run killed with
// SIGKILL at a random moment resumes from its latest whole checkpoint and reports exactly the
// losses of an unbroken run from there on; a checkpoint left half-written, or damaged, is
// passed over for the one before; a checkpoint taken on two devices (tensor parallel) resumes
// on one and on four (dp2 x tp2) within rounding; adam's moments and step count carry over;
// under bf16 the variables' bfloat16 copies are not saved and are remade on resume.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/testing/softwire_process.h"

namespace softwire {
namespace {

namespace fs = std::filesystem;
using cli_testing::Outcome;
using cli_testing::RunSoftwire;

constexpr char kMlp[] = "tests/compiler/jobs/mlp.pbtxt";
constexpr char kTransformer[] = "tests/compiler/jobs/transformer.pbtxt";

class CheckpointResumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/softwire_checkpoint_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    directory_ = pattern;
  }
  void TearDown() override { fs::remove_all(directory_); }

  std::string Path(const std::string& name) const { return directory_ + "/" + name; }

  // Runs `softwire run ARGS --metrics-out FILE --quiet` and returns the loss of each step.
  std::map<int64_t, double> Losses(const std::string& args, const std::string& metrics) {
    Outcome outcome =
        RunSoftwire(SOFTWIRE_BINARY, "run " + args + " --quiet --metrics-out " + Path(metrics));
    EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
    return ReadLosses(Path(metrics));
  }

  static std::map<int64_t, double> ReadLosses(const std::string& path) {
    std::map<int64_t, double> losses;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      long long step = -1;
      double loss = 0;
      if (std::sscanf(line.c_str(), "{\"step\":%lld,\"loss\":%lf", &step, &loss) == 2) {
        losses[step] = loss;
      }
    }
    return losses;
  }

  std::string directory_;
};

// Starts `softwire run ARGS` with its output to /dev/null; returns its pid.
pid_t Start(const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    std::vector<char*> argv = {const_cast<char*>(SOFTWIRE_BINARY)};
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    ::execv(SOFTWIRE_BINARY, argv.data());
    ::_exit(127);
  }
  return pid;
}

bool HasCheckpoint(const std::string& directory) {
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, error)) {
    if (entry.path().filename().string().rfind("step-", 0) == 0) return true;
  }
  return false;
}

TEST_F(CheckpointResumeTest, KilledRunsResumeWithTheUnbrokenLosses) {
  const std::string job = std::string(kMlp) + " --steps 300";
  const std::map<int64_t, double> unbroken = Losses(job, "unbroken.jsonl");
  ASSERT_EQ(unbroken.size(), 300u);
  std::mt19937 random(std::random_device{}());
  int resumed_attempts = 0;
  for (int attempt = 0; attempt < 4; ++attempt) {
    SCOPED_TRACE("attempt " + std::to_string(attempt));
    const std::string checkpoints = Path("killed" + std::to_string(attempt));
    // A checkpoint every step: a kill at a random moment often lands inside a save.
    const pid_t pid = Start({"run", kMlp, "--steps", "300", "--checkpoint-every", "1",
                             "--keep-checkpoints", "2", "--checkpoint-dir", checkpoints});
    ASSERT_GT(pid, 0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!HasCheckpoint(checkpoints) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 400)(random)));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(HasCheckpoint(checkpoints)) << "no checkpoint within 60 s";
    if (WIFEXITED(status)) {
      // The run finished before the kill: its last checkpoint is step 300, nothing to resume.
      continue;
    }
    const std::string metrics = "resumed" + std::to_string(attempt) + ".jsonl";
    Outcome outcome = RunSoftwire(SOFTWIRE_BINARY, "run " + job + " --resume " + checkpoints +
                                                       " --quiet --metrics-out " + Path(metrics));
    if (cli_testing::Contains(outcome.output, "no step is left to run")) continue;
    ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
    ++resumed_attempts;
    const std::map<int64_t, double> resumed = ReadLosses(Path(metrics));
    ASSERT_FALSE(resumed.empty());
    EXPECT_EQ(resumed.rbegin()->first, 299);
    EXPECT_EQ(static_cast<int64_t>(resumed.size()), 300 - resumed.begin()->first);
    for (const auto& [step, loss] : resumed) {
      EXPECT_EQ(loss, unbroken.at(step)) << "step " << step;  // The same arithmetic, bit for bit.
    }
  }
  EXPECT_GE(resumed_attempts, 2) << "the kills came too late to test a resume";
}

TEST_F(CheckpointResumeTest, HalfWrittenAndDamagedCheckpointsArePassedOver) {
  const std::string job = std::string(kMlp) + " --steps 9";
  const std::map<int64_t, double> unbroken = Losses(job, "unbroken.jsonl");
  const std::string checkpoints = Path("checkpoints");
  // Steps 3 and 6 in two runs (in one, a writer behind a fast run may pass over step 3 for 6).
  Losses(std::string(kMlp) + " --steps 3 --checkpoint-every 3 --checkpoint-dir " + checkpoints,
         "first.jsonl");
  Losses(std::string(kMlp) + " --steps 6 --checkpoint-every 3 --resume " + checkpoints,
         "second.jsonl");
  ASSERT_TRUE(fs::exists(checkpoints + "/step-00000003"));
  ASSERT_TRUE(fs::exists(checkpoints + "/step-00000006"));
  // What a writer killed mid-save leaves: a hidden folder, never a step folder.
  fs::create_directories(checkpoints + "/.partial-step-00000008-1234/variables");
  std::ofstream(checkpoints + "/.partial-step-00000008-1234/variables/w1.npy") << "\x93NUMPY";
  // A damaged latest checkpoint (a disk error after the save): a variable cut short.
  std::string damaged;
  for (const fs::directory_entry& entry :
       fs::directory_iterator(checkpoints + "/step-00000006/variables")) {
    damaged = entry.path().string();
    break;
  }
  ASSERT_FALSE(damaged.empty());
  fs::resize_file(damaged, fs::file_size(damaged) / 2);
  Outcome outcome = RunSoftwire(SOFTWIRE_BINARY, "run " + job + " --resume " + checkpoints +
                                                     " --metrics-out " + Path("resumed.jsonl"));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_TRUE(cli_testing::Contains(outcome.output, "skipping checkpoint")) << outcome.output;
  EXPECT_TRUE(cli_testing::Contains(outcome.output, "resuming from step 3")) << outcome.output;
  const std::map<int64_t, double> resumed = ReadLosses(Path("resumed.jsonl"));
  ASSERT_EQ(resumed.size(), 6u);
  for (const auto& [step, loss] : resumed) EXPECT_EQ(loss, unbroken.at(step)) << "step " << step;
}

TEST_F(CheckpointResumeTest, ResumesOnAnotherParallelLayout) {
  const std::string job = std::string(kMlp) + " --steps 12";
  const std::map<int64_t, double> unbroken = Losses(job, "unbroken.jsonl");
  const std::string checkpoints = Path("tp2");
  Losses(std::string(kMlp) +
             " --steps 6 --cluster 2cpu --tp 2 --checkpoint-every 6 --checkpoint-dir " +
             checkpoints,
         "tp2.jsonl");
  for (const std::string layout : {"", " --cluster 4cpu --dp 2 --tp 2"}) {
    SCOPED_TRACE("layout '" + layout + "'");
    const std::map<int64_t, double> resumed =
        Losses(job + layout + " --resume " + checkpoints, "resumed.jsonl");
    ASSERT_EQ(resumed.size(), 6u);
    for (const auto& [step, loss] : resumed) {
      // Other layouts sum in another order: float32 rounding, nothing more.
      EXPECT_NEAR(loss, unbroken.at(step), 1e-5 * std::abs(unbroken.at(step))) << "step " << step;
    }
  }
}

TEST_F(CheckpointResumeTest, AdamMomentsAndStepCountCarryOver) {
  const std::string job = std::string(kTransformer) + " --steps 6";
  const std::map<int64_t, double> unbroken = Losses(job, "unbroken.jsonl");
  const std::string checkpoints = Path("adam");
  Losses(
      std::string(kTransformer) + " --steps 3 --checkpoint-every 3 --checkpoint-dir " + checkpoints,
      "first.jsonl");
  const std::map<int64_t, double> resumed =
      Losses(job + " --resume " + checkpoints, "resumed.jsonl");
  ASSERT_EQ(resumed.size(), 3u);
  for (const auto& [step, loss] : resumed) EXPECT_EQ(loss, unbroken.at(step)) << "step " << step;
}

// Under bf16 the updates write the variables' bfloat16 copies (fold_weight_casts), which are
// derived state: a checkpoint holds only the float32 variables, and a resumed run makes the
// copies from them on its first step. Copies not remade (zeros, or the initial weights) would
// give other losses.
TEST_F(CheckpointResumeTest, Bf16CopiesAreNotSavedAndAreRemadeOnResume) {
  const std::string job = std::string(kTransformer) + " --precision bf16 --steps 6";
  const std::map<int64_t, double> unbroken = Losses(job, "unbroken.jsonl");
  const std::string checkpoints = Path("bf16");
  Losses(std::string(kTransformer) +
             " --precision bf16 --steps 3 --checkpoint-every 3 --checkpoint-dir " + checkpoints,
         "first.jsonl");
  for (const fs::directory_entry& entry :
       fs::recursive_directory_iterator(checkpoints + "/step-00000003")) {
    EXPECT_EQ(entry.path().filename().string().find(".bf16"), std::string::npos) << entry.path();
  }
  const std::map<int64_t, double> resumed =
      Losses(job + " --resume " + checkpoints, "resumed.jsonl");
  ASSERT_EQ(resumed.size(), 3u);
  for (const auto& [step, loss] : resumed) EXPECT_EQ(loss, unbroken.at(step)) << "step " << step;
}

TEST_F(CheckpointResumeTest, BadResumeAndCheckpointFlagsAreRefused) {
  Outcome missing =
      RunSoftwire(SOFTWIRE_BINARY, std::string("run ") + kMlp + " --resume " + Path("nothing"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(cli_testing::Contains(missing.output, "holds no whole checkpoint")) << missing.output;
  Outcome no_directory =
      RunSoftwire(SOFTWIRE_BINARY, std::string("run ") + kMlp + " --checkpoint-every 2");
  EXPECT_EQ(no_directory.exit_code, 2);
  EXPECT_TRUE(cli_testing::Contains(no_directory.output, "--checkpoint-dir"))
      << no_directory.output;
  // A checkpoint of another job: its variables are not this job's.
  const std::string checkpoints = Path("mlp");
  Losses(std::string(kMlp) + " --steps 2 --checkpoint-every 1 --checkpoint-dir " + checkpoints,
         "mlp.jsonl");
  Outcome other =
      RunSoftwire(SOFTWIRE_BINARY, std::string("run ") + kTransformer + " --resume " + checkpoints);
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_TRUE(cli_testing::Contains(other.output, "variable '")) << other.output;
}

}  // namespace
}  // namespace softwire
