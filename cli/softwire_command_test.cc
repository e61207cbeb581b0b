// Runs the `softwire` binary as a user would and checks exit codes, messages and outputs.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "base/file.h"
#include "base/npy.h"
#include "cli/testing/softwire_process.h"

namespace softwire {
namespace {

using cli_testing::Contains;
using cli_testing::kTinyJob;
using cli_testing::Outcome;

// Runs `softwire ARGS` with a 60 s bound (cli/testing/softwire_process.h).
Outcome RunSoftwire(const std::string& args) {
  return cli_testing::RunSoftwire(SOFTWIRE_BINARY, args);
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/cli_" + name;
}

std::string WriteJob(const std::string& name, const std::string& text) {
  std::string path = TempPath(name);
  EXPECT_TRUE(WriteFileAtomically(path, text).ok());
  return path;
}

TEST(SoftwireCommandTest, HelpIsThereForTheToolAndEachCommand) {
  Outcome help = RunSoftwire("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(Contains(help.output, "usage: softwire")) << help.output;
  Outcome run_help = RunSoftwire("help run");
  EXPECT_EQ(run_help.exit_code, 0);
  EXPECT_TRUE(Contains(run_help.output, "--metrics-out FILE")) << run_help.output;
  EXPECT_EQ(RunSoftwire("run --help").exit_code, 0);
  EXPECT_EQ(RunSoftwire("help compile").exit_code, 0);
}

TEST(SoftwireCommandTest, UsageErrorsExitWithTwoAndSayWhatIsWrong) {
  struct Case {
    std::string args;
    std::string message;
  };
  for (const Case& c :
       {Case{"", "usage: softwire"}, Case{"frobnicate", "unknown command"},
        Case{"run", "no job file given"}, Case{"run a.pbtxt b.pbtxt", "exactly one job file"},
        Case{"run x.pbtxt --steps three", "--steps: 'three' is not an integer"},
        Case{"run x.pbtxt --bogus", "unknown flag --bogus"},
        Case{"help frobnicate", "unknown command"}}) {
    Outcome outcome = RunSoftwire(c.args);
    EXPECT_EQ(outcome.exit_code, 2) << c.args << "\n" << outcome.output;
    EXPECT_TRUE(Contains(outcome.output, c.message)) << c.args << "\n" << outcome.output;
  }
}

TEST(SoftwireCommandTest, BadJobFilesExitWithTwoNamingFileAndLine) {
  Outcome missing = RunSoftwire("run " + TempPath("no_such_job.pbtxt"));
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_TRUE(Contains(missing.output, "no_such_job.pbtxt")) << missing.output;

  std::string broken = WriteJob("broken.pbtxt", "name: \"broken\"\n\nsource { name: \n");
  Outcome syntax = RunSoftwire("run " + broken);
  EXPECT_EQ(syntax.exit_code, 2) << syntax.output;
  EXPECT_TRUE(Contains(syntax.output, "broken.pbtxt:")) << syntax.output;

  std::string unknown_op = kTinyJob;
  unknown_op.replace(unknown_op.find("\"matmul\""), 8, "\"matmool\"");
  Outcome op = RunSoftwire("compile " + WriteJob("unknown_op.pbtxt", unknown_op));
  EXPECT_EQ(op.exit_code, 2) << op.output;
  EXPECT_TRUE(Contains(op.output, "unknown_op.pbtxt:14")) << op.output;
  EXPECT_TRUE(Contains(op.output, "matmool")) << op.output;
}

TEST(SoftwireCommandTest, AKernelFailureDuringTheRunExitsWithOneNamingTheActor) {
  std::string bad_labels = kTinyJob;  // Labels up to 9 for 3 classes.
  bad_labels.replace(bad_labels.find("int_high: 3"), 11, "int_high: 10");
  std::string metrics = TempPath("failed_metrics.jsonl");
  Outcome outcome =
      RunSoftwire("run " + WriteJob("bad_labels.pbtxt", bad_labels) + " --metrics-out " + metrics);
  EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
  EXPECT_TRUE(Contains(outcome.output, "job 'tiny' failed: actor 'xent'")) << outcome.output;
  StatusOr<std::string> lines = ReadFile(metrics);
  ASSERT_TRUE(lines.ok()) << "the metrics file is written whole even when the run fails";
  EXPECT_TRUE(lines->empty() || lines->back() == '\n') << *lines;
}

TEST(SoftwireCommandTest, AJobWhoseDataCannotBeLoadedIsBadInput) {
  std::string missing = kTinyJob;
  missing.replace(missing.find("synthetic { seed: 7 int_high: 3 }"), 33,
                  "npy { path: \"nothere_x.npy\" path: \"nothere_y.npy\" }");
  Outcome outcome = RunSoftwire("run " + WriteJob("missing_data.pbtxt", missing));
  EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
  EXPECT_TRUE(Contains(outcome.output, "nothere_x.npy")) << outcome.output;
}

TEST(SoftwireCommandTest, RunTrainsWritesMetricsAndSavesVariables) {
  std::string job = WriteJob("tiny.pbtxt", kTinyJob);
  std::string metrics = TempPath("metrics.jsonl");
  std::string saved = TempPath("saved");
  Outcome outcome =
      RunSoftwire("run " + job + " --steps 3 --metrics-out " + metrics + " --save " + saved);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_TRUE(Contains(outcome.output, "step 1/3  loss ")) << outcome.output;
  EXPECT_TRUE(Contains(outcome.output, "done: 3 steps")) << outcome.output;

  StatusOr<std::string> lines = ReadFile(metrics);
  ASSERT_TRUE(lines.ok()) << lines.status();
  for (int step = 0; step < 3; ++step) {
    EXPECT_TRUE(Contains(*lines, "{\"step\":" + std::to_string(step) + ",\"loss\":")) << *lines;
  }
  EXPECT_EQ(std::count(lines->begin(), lines->end(), '\n'), 3) << *lines;

  StatusOr<NpyArray> w = ReadNpy(saved + "/w.npy");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->shape, Shape({4, 3}));
}

// The text after "final loss " on the run's last line.
std::string FinalLoss(const std::string& output) {
  const size_t at = output.rfind("final loss ");
  if (at == std::string::npos) return "";
  return output.substr(at + 11, output.find_first_of(";\n", at) - (at + 11));
}

TEST(SoftwireCommandTest, PlacementFlagsRunTheJobOnSeveralDevices) {
  std::string job = WriteJob("placed.pbtxt", kTinyJob);
  Outcome one = RunSoftwire("run " + job);
  ASSERT_EQ(one.exit_code, 0) << one.output;
  // Two cpu devices, data parallel: both are used and the losses are the single device's
  // (this job is tiny: the printed six digits agree).
  Outcome two = RunSoftwire("run " + job + " --cluster 2cpu --dp 2");
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_TRUE(Contains(two.output, "node0/cpu:0")) << two.output;
  EXPECT_TRUE(Contains(two.output, "node0/cpu:1")) << two.output;
  EXPECT_FALSE(FinalLoss(one.output).empty()) << one.output;
  EXPECT_EQ(FinalLoss(two.output), FinalLoss(one.output)) << two.output;
  // Sim devices: the steps complete and are timed; nothing is computed.
  Outcome sim = RunSoftwire("run " + job + " --cluster 4sim --dp 2 --pp 2");
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  EXPECT_TRUE(Contains(sim.output, "node0/sim:3")) << sim.output;
  EXPECT_EQ(FinalLoss(sim.output), "nan") << sim.output;
  // The placement, explained.
  Outcome explained = RunSoftwire("compile " + job + " --cluster 2cpu --dp 2 --explain");
  ASSERT_EQ(explained.exit_code, 0) << explained.output;
  EXPECT_TRUE(Contains(explained.output, "data_parallel 2 x tensor_parallel 1 x pipeline_stages 1"))
      << explained.output;
  // More devices than the cluster has, and a count below one, are bad input naming the cause.
  Outcome too_many = RunSoftwire("run " + job + " --cluster 2cpu --dp 4");
  EXPECT_EQ(too_many.exit_code, 2) << too_many.output;
  EXPECT_TRUE(Contains(too_many.output, "needs 4 devices but the cluster has 2"))
      << too_many.output;
  Outcome zero = RunSoftwire("run " + job + " --tp 0");
  EXPECT_EQ(zero.exit_code, 2) << zero.output;
  EXPECT_TRUE(Contains(zero.output, "--tp must be >= 1")) << zero.output;
  // Placement flags are checked before the job file is read, by every command.
  for (const char* command : {"run", "compile", "simulate"}) {
    Outcome early = RunSoftwire(std::string(command) + " /nonexistent/job.pbtxt --dp 0");
    EXPECT_EQ(early.exit_code, 2) << command << "\n" << early.output;
    EXPECT_TRUE(Contains(early.output, "--dp must be >= 1")) << command << "\n" << early.output;
  }
}

// What a user without a GPU sees: a cuda cluster fails before anything runs, saying what is
// missing (a build with CUDA and no driver or GPU), or that this build has no CUDA. On a GPU
// the job trains, with the cpu's losses (docs/CUDA.md), and the same losses bit for bit whether
// its Readies and Releases go at launch or at completion, with 1 or 4 firings in flight.
TEST(SoftwireCommandTest, ACudaClusterSaysWhatIsMissingOrTrainsAsTheCpuDoes) {
  std::string job = WriteJob("cuda.pbtxt", kTinyJob);
  Outcome cuda = RunSoftwire("run " + job + " --cluster 1cuda");
  if (cuda.exit_code == 0) {  // A GPU machine.
    Outcome cpu = RunSoftwire("run " + job);
    ASSERT_EQ(cpu.exit_code, 0) << cpu.output;
    EXPECT_NEAR(std::stod(FinalLoss(cuda.output)), std::stod(FinalLoss(cpu.output)), 1e-5)
        << cuda.output;
    for (const char* flags : {" --no-stream-order", " --max-in-flight 4"}) {
      Outcome other = RunSoftwire("run " + job + " --cluster 1cuda" + flags);
      ASSERT_EQ(other.exit_code, 0) << flags << ": " << other.output;
      EXPECT_EQ(FinalLoss(other.output), FinalLoss(cuda.output)) << flags;
    }
    return;
  }
  EXPECT_NE(cuda.exit_code, 124) << "a cuda cluster without a GPU must fail, not hang";
  const bool no_gpu = Contains(cuda.output, "device 'node0/cuda:0' cannot be created: no CUDA");
  const bool no_cuda_build = Contains(cuda.output, "this build has no CUDA");
  EXPECT_TRUE(no_gpu || no_cuda_build) << cuda.output;
  EXPECT_FALSE(Contains(cuda.output, "Check failed")) << cuda.output;
}

TEST(SoftwireCommandTest, QuietRunsPrintNothing) {
  std::string job = WriteJob("quiet.pbtxt", kTinyJob);
  Outcome outcome = RunSoftwire("run " + job + " --quiet");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_EQ(outcome.output, "");
}

TEST(SoftwireCommandTest, AnUnwritableMetricsPathIsBadInputCaughtBeforeTheRun) {
  std::string job = WriteJob("unwritable.pbtxt", kTinyJob);
  Outcome outcome = RunSoftwire("run " + job + " --metrics-out /nonexistent/dir/m.jsonl");
  EXPECT_EQ(outcome.exit_code, 2) << outcome.output;
  EXPECT_TRUE(Contains(outcome.output, "--metrics-out")) << outcome.output;
  EXPECT_FALSE(Contains(outcome.output, "step 1/")) << outcome.output;
}

TEST(SoftwireCommandTest, CompilePrintsTheSummaryOrTheWholePlan) {
  std::string job = WriteJob("compile.pbtxt", kTinyJob);
  Outcome summary = RunSoftwire("compile " + job);
  EXPECT_EQ(summary.exit_code, 0) << summary.output;
  Outcome dump = RunSoftwire("compile " + job + " --dump");
  EXPECT_EQ(dump.exit_code, 0) << dump.output;
  EXPECT_FALSE(summary.output.empty());
  EXPECT_NE(summary.output, dump.output);
}

}  // namespace
}  // namespace softwire
