// Portable plans: a plan names its data files relative to the job file's directory, so a plan
// compiled from a job in one directory, serialized, and loaded where only the job's data files
// were copied, runs there with that directory as its data root and trains to the same losses.
// Without a data root, or with a file missing under it, loading or running fails naming the
// data source or variable and the path it resolved.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/file.h"
#include "base/npy.h"
#include "compiler/compiler.h"
#include "data/test_util.h"
#include "reference/interpreter/reference_interpreter.h"
#include "runtime/host/job_runner.h"

namespace softwire {
namespace {

using data::testing_util::TemporaryDirectory;
using ::testing::HasSubstr;

constexpr int kSamples = 32;

const char kJob[] = R"(
  name: "portable"
  source {
    name: "data"
    output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: 6 }
    output { name: "labels" dtype: DATA_TYPE_INT32 }
    npy { path: ["./data/x.npy", "data/labels.npy"] }
  }
  variable { name: "w" dtype: DATA_TYPE_FLOAT32 dims: [6, 3]
             initializer { npy_path: "init/w.npy" } }
  op { name: "fc" type: "matmul" input: ["x", "w"] output: "logits" }
  op { name: "xent" type: "softmax_cross_entropy" input: ["logits", "labels"] output: "l" }
  op { name: "mean" type: "reduce_mean" input: "l" output: "loss" }
  train {
    loss: "loss"
    optimizer { sgd { learning_rate: 0.5 } }
    steps: 4
    micro_batch_size: 8
    micro_batches_per_step: 2
  }
)";

// Writes the job file and its data files (data/x.npy, data/labels.npy, init/w.npy) into
// `directory`.
void WriteJob(const std::string& directory) {
  std::vector<float> x(kSamples * 6);
  std::vector<int32_t> labels(kSamples);
  for (int i = 0; i < kSamples; ++i) {
    labels[i] = i % 3;
    for (int k = 0; k < 6; ++k) x[i * 6 + k] = static_cast<float>(((i * 7 + k * 5) % 11) - 5) / 5;
  }
  std::vector<float> w(18);
  for (int k = 0; k < 18; ++k) w[k] = static_cast<float>((k % 5) - 2) / 10;
  ASSERT_TRUE(MakeDirectories(directory + "/data").ok());
  ASSERT_TRUE(MakeDirectories(directory + "/init").ok());
  ASSERT_TRUE(
      WriteNpy(directory + "/data/x.npy", DType::kFloat32, Shape{kSamples, 6}, x.data()).ok());
  ASSERT_TRUE(
      WriteNpy(directory + "/data/labels.npy", DType::kInt32, Shape{kSamples}, labels.data()).ok());
  ASSERT_TRUE(WriteNpy(directory + "/init/w.npy", DType::kFloat32, Shape{6, 3}, w.data()).ok());
  ASSERT_TRUE(WriteFileAtomically(directory + "/job.pbtxt", kJob).ok());
}

// Compiles `directory`/job.pbtxt (by its path, as `softwire run` does) and returns the plan
// serialized, as it would travel to another host.
std::string CompileSerialized(const std::string& directory) {
  StatusOr<compiler::JobFile> job = compiler::ParseJobFile(directory + "/job.pbtxt");
  EXPECT_TRUE(job.ok()) << job.status();
  if (!job.ok()) return "";
  StatusOr<proto::Plan> plan = compiler::CompileJob(*job, compiler::CompileOptions());
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? plan->SerializeAsString() : "";
}

runtime::RunOptions Options(const std::string& data_root) {
  runtime::RunOptions options;
  options.stall_timeout_seconds = 30;
  options.kernel_threads = 1;
  options.data_root.directory = data_root;
  return options;
}

std::vector<double> Losses(const runtime::RunResult& result) {
  std::vector<double> losses;
  for (const runtime::StepResult& step : result.steps) losses.push_back(step.loss);
  return losses;
}

TEST(PortablePlan, RunsWhereItsDataWasCopiedWithTheSameLosses) {
  TemporaryDirectory compiled_in;
  TemporaryDirectory copied_to;
  WriteJob(compiled_in.path());
  const std::string serialized = CompileSerialized(compiled_in.path());
  ASSERT_FALSE(serialized.empty());
  // The plan names no directory of the machine that compiled it.
  EXPECT_EQ(serialized.find(compiled_in.path()), std::string::npos);

  StatusOr<runtime::RunResult> here = runtime::RunPlan(
      [&] {
        proto::Plan plan;
        EXPECT_TRUE(plan.ParseFromString(serialized));
        return plan;
      }(),
      Options(compiled_in.path()));
  ASSERT_TRUE(here.ok()) << here.status();

  // Another host: the data files only, under another directory; the original is gone.
  for (const char* folder : {"data", "init"}) {
    std::filesystem::copy(compiled_in.path() + "/" + folder, copied_to.path() + "/" + folder,
                          std::filesystem::copy_options::recursive);
  }
  std::filesystem::remove_all(compiled_in.path() + "/data");
  std::filesystem::remove_all(compiled_in.path() + "/init");
  proto::Plan loaded;
  ASSERT_TRUE(loaded.ParseFromString(serialized));
  StatusOr<runtime::RunResult> there = runtime::RunPlan(loaded, Options(copied_to.path()));
  ASSERT_TRUE(there.ok()) << there.status();
  ASSERT_EQ(there->steps.size(), 4u);
  EXPECT_EQ(Losses(*there), Losses(*here));
  EXPECT_LT(there->steps.back().loss, there->steps.front().loss);

  reference::ReferenceOptions reference_options;
  reference_options.data_root = copied_to.path();
  StatusOr<reference::ReferenceResult> reference =
      reference::RunReferencePlan(loaded, reference_options);
  ASSERT_TRUE(reference.ok()) << reference.status();
  for (size_t step = 0; step < there->steps.size(); ++step) {
    EXPECT_NEAR(there->steps[step].loss, reference->steps[step].loss, 1e-5) << step;
  }
}

TEST(PortablePlan, WithoutADataRootLoadingFailsNamingTheSource) {
  TemporaryDirectory directory;
  WriteJob(directory.path());
  proto::Plan plan;
  ASSERT_TRUE(plan.ParseFromString(CompileSerialized(directory.path())));
  StatusOr<runtime::RunResult> result = runtime::RunPlan(plan, Options(""));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr("source 'data'"));
  EXPECT_THAT(result.status().message(), HasSubstr("'data/x.npy' is relative and no data root"));
}

TEST(PortablePlan, AFileMissingUnderTheDataRootFailsNamingTheVariableAndThePath) {
  TemporaryDirectory directory;
  WriteJob(directory.path());
  proto::Plan plan;
  ASSERT_TRUE(plan.ParseFromString(CompileSerialized(directory.path())));
  std::filesystem::remove(directory.path() + "/init/w.npy");
  StatusOr<runtime::RunResult> result = runtime::RunPlan(plan, Options(directory.path()));
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("variable 'w'"));
  EXPECT_THAT(result.status().message(), HasSubstr(directory.path() + "/init/w.npy"));
}

TEST(PortablePlan, AConfinedDataRootRefusesAPathTheJobWroteAbsolute) {
  TemporaryDirectory directory;
  WriteJob(directory.path());
  proto::Plan plan;
  ASSERT_TRUE(plan.ParseFromString(CompileSerialized(directory.path())));
  for (proto::ActorDef& actor : *plan.mutable_actor()) {
    if (actor.has_variable()) {
      actor.mutable_variable()->mutable_initializer()->set_npy_path(directory.path() +
                                                                    "/init/w.npy");
    }
  }
  runtime::RunOptions options = Options(directory.path());
  ASSERT_TRUE(runtime::RunPlan(plan, options).ok());  // Not confined: the file is read.
  options.data_root.confined = true;
  StatusOr<runtime::RunResult> refused = runtime::RunPlan(plan, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("variable 'w'"));
  EXPECT_THAT(refused.status().message(), HasSubstr("leaves the data root"));
}

}  // namespace
}  // namespace softwire
