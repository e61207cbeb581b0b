// The placement flags shared by run, compile and simulate.
#include "cli/parallel_flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace softwire {
namespace cli {
namespace {

StatusOr<compiler::CompileOptions> Apply(const std::vector<std::string>& args) {
  FlagParser parser;
  ParallelFlags flags;
  AddParallelFlags(&parser, &flags);
  std::vector<std::string> positional;
  SOFTWIRE_RETURN_IF_ERROR(parser.Parse(args, &positional));
  compiler::CompileOptions options;
  SOFTWIRE_RETURN_IF_ERROR(ApplyParallelFlags(flags, &options));
  return options;
}

TEST(ParallelFlagsTest, FlagsNotGivenLeaveTheJobsSettings) {
  StatusOr<compiler::CompileOptions> options = Apply({});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->parallel.data_parallel(), 0);  // 0: the job's degree stands.
  EXPECT_EQ(options->parallel.tensor_parallel(), 0);
  EXPECT_EQ(options->parallel.pipeline_stages(), 0);
  EXPECT_EQ(options->micro_batches_per_step, 0);
  EXPECT_EQ(options->cluster.node_size(), 0);
}

TEST(ParallelFlagsTest, GivenFlagsSetTheClusterDegreesAndMicroBatches) {
  StatusOr<compiler::CompileOptions> options =
      Apply({"--cluster", "2x4sim", "--dp", "2", "--tp", "2", "--pp", "2", "--micro-batches", "8"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->parallel.data_parallel(), 2);
  EXPECT_EQ(options->parallel.tensor_parallel(), 2);
  EXPECT_EQ(options->parallel.pipeline_stages(), 2);
  EXPECT_EQ(options->micro_batches_per_step, 8);
  ASSERT_EQ(options->cluster.node_size(), 2);
}

TEST(ParallelFlagsTest, MaxInFlightIsOneByDefaultAndRefusedBelowOne) {
  StatusOr<compiler::CompileOptions> options = Apply({});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->max_in_flight, 1);
  options = Apply({"--max-in-flight", "4"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->max_in_flight, 4);
  options = Apply({"--max-in-flight", "0"});
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.status().message().find("--max-in-flight must be 1 to 1024, not 0"),
            std::string::npos)
      << options.status();
}

TEST(ParallelFlagsTest, SourceSlotsAreTheCompilersChoiceByDefaultOrForcedToOneOrTwo) {
  EXPECT_EQ(Apply({})->source_slots, 0);
  EXPECT_EQ(Apply({"--source-slots", "1"})->source_slots, 1);
  EXPECT_EQ(Apply({"--source-slots", "2"})->source_slots, 2);
  for (const char* value : {"3", "-1"}) {
    StatusOr<compiler::CompileOptions> options = Apply({"--source-slots", value});
    ASSERT_FALSE(options.ok()) << value;
    EXPECT_NE(
        options.status().message().find(
            std::string("--source-slots must be 1 or 2 (0: the compiler's choice), not ") + value),
        std::string::npos)
        << options.status();
  }
}

TEST(ParallelFlagsTest, CountsBelowOneAndBadClustersAreRefusedNamingTheFlag) {
  for (const char* flag : {"--dp", "--tp", "--pp", "--micro-batches"}) {
    for (const char* value : {"0", "-3"}) {
      StatusOr<compiler::CompileOptions> options = Apply({flag, value});
      ASSERT_FALSE(options.ok()) << flag << " " << value;
      EXPECT_EQ(options.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(options.status().message().find(std::string(flag) + " must be >= 1, not " + value),
                std::string::npos)
          << options.status();
    }
  }
  StatusOr<compiler::CompileOptions> cluster = Apply({"--cluster", "bogus"});
  ASSERT_FALSE(cluster.ok());
  EXPECT_NE(cluster.status().message().find("--cluster: cluster 'bogus'"), std::string::npos)
      << cluster.status();
}

TEST(ParallelFlagsTest, PrecisionTakesFloat32Bf16OrAutoAndNothingElse) {
  EXPECT_EQ(Apply({})->precision, proto::PRECISION_UNSPECIFIED);  // The job's stands.
  EXPECT_EQ(Apply({"--precision", "float32"})->precision, proto::PRECISION_FLOAT32);
  EXPECT_EQ(Apply({"--precision", "bf16"})->precision, proto::PRECISION_BF16);
  EXPECT_EQ(Apply({"--precision", "auto"})->precision, proto::PRECISION_AUTO);
  StatusOr<compiler::CompileOptions> bad = Apply({"--precision", "fp16"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--precision must be float32, bf16 or auto, not 'fp16'"),
            std::string::npos)
      << bad.status();
}

TEST(ParallelFlagsTest, LayoutsTakeAutoNchwNhwcOrNChw16cAndNothingElse) {
  EXPECT_EQ(Apply({})->layouts, "auto");
  EXPECT_EQ(Apply({"--layouts", "nchw"})->layouts, "nchw");
  EXPECT_EQ(Apply({"--layouts", "nhwc"})->layouts, "nhwc");
  EXPECT_EQ(Apply({"--layouts", "nChw16c"})->layouts, "nChw16c");
  StatusOr<compiler::CompileOptions> bad = Apply({"--layouts", "nchw8c"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--layouts must be auto, nchw, nhwc or nChw16c"),
            std::string::npos)
      << bad.status();
}

TEST(ParallelFlagsTest, SbpSearchTakesGlobalOrGreedyAndNothingElse) {
  EXPECT_EQ(Apply({})->sbp_search, compiler::SbpSearchMethod::kGlobal);
  EXPECT_EQ(Apply({"--sbp-search", "global"})->sbp_search, compiler::SbpSearchMethod::kGlobal);
  EXPECT_EQ(Apply({"--sbp-search", "greedy"})->sbp_search, compiler::SbpSearchMethod::kGreedy);
  StatusOr<compiler::CompileOptions> bad = Apply({"--sbp-search", "ilp"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--sbp-search must be global or greedy, not 'ilp'"),
            std::string::npos)
      << bad.status();
}

}  // namespace
}  // namespace cli
}  // namespace softwire
