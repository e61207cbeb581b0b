// ReadCommandLine: --help wins, then the parser, the command's own checks and exactly one
// operand; every refusal is a bad-input exit and no operand.
#include "cli/command_line.h"

#include <gtest/gtest.h>

#include "cli/commands.h"

namespace softwire {
namespace cli {
namespace {

struct Fixture {
  int64_t steps = 1;
  bool help = false;
  FlagParser parser;
  int checks = 0;

  Fixture() {
    parser.AddInt("steps", &steps, "N", "steps");
    parser.AddBool("help", &help, "help");
  }

  std::optional<int> Read(const std::vector<std::string>& args, std::string* operand) {
    CommandLineSpec spec{"try",
                         "JOB.pbtxt",
                         "job file",
                         "",
                         &parser,
                         &help,
                         [] { return std::string("the help\n"); },
                         [this]() -> Status {
                           ++checks;
                           return steps >= 1 ? Status::Ok()
                                             : InvalidArgumentError("--steps must be at least 1");
                         }};
    return ReadCommandLine(spec, args, operand);
  }
};

TEST(CommandLineTest, OneOperandAndGoodFlagsGoOn) {
  Fixture fixture;
  std::string operand;
  EXPECT_FALSE(fixture.Read({"job.pbtxt", "--steps", "3"}, &operand).has_value());
  EXPECT_EQ(operand, "job.pbtxt");
  EXPECT_EQ(fixture.steps, 3);
  EXPECT_EQ(fixture.checks, 1);
}

TEST(CommandLineTest, HelpExitsZeroEvenBesideBadArguments) {
  Fixture fixture;
  std::string operand;
  EXPECT_EQ(fixture.Read({"--help", "--steps", "0", "a", "b"}, &operand), kExitSuccess);
  EXPECT_TRUE(operand.empty());
}

TEST(CommandLineTest, BadFlagsMissingOrExtraOperandsAreBadInput) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"job.pbtxt", "--steps", "0"},
                                             {"job.pbtxt", "--stepz", "2"},
                                             {},
                                             {"a.pbtxt", "b.pbtxt"}}) {
    Fixture fixture;
    std::string operand;
    EXPECT_EQ(fixture.Read(args, &operand), kExitBadInput) << ::testing::PrintToString(args);
    EXPECT_TRUE(operand.empty());
  }
}

}  // namespace
}  // namespace cli
}  // namespace softwire
