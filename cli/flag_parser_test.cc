#include "cli/flag_parser.h"

#include <gtest/gtest.h>

namespace softwire {
namespace cli {
namespace {

struct Flags {
  int64_t steps = 5;
  double timeout = 1.5;
  std::string out;
  bool quiet = false;
};

FlagParser MakeParser(Flags* flags) {
  FlagParser parser;
  parser.AddInt("steps", &flags->steps, "N", "steps to run");
  parser.AddDouble("timeout", &flags->timeout, "SECONDS", "stall timeout");
  parser.AddString("out", &flags->out, "FILE", "output file");
  parser.AddBool("quiet", &flags->quiet, "print nothing");
  return parser;
}

TEST(FlagParserTest, SpaceAndEqualsFormsSetValuesAndLeavePositionalsInOrder) {
  Flags flags;
  std::vector<std::string> positional;
  ASSERT_TRUE(
      MakeParser(&flags)
          .Parse({"a.pbtxt", "--steps", "12", "--timeout=0.25", "--out", "m.jsonl", "--quiet", "b"},
                 &positional)
          .ok());
  EXPECT_EQ(flags.steps, 12);
  EXPECT_EQ(flags.timeout, 0.25);
  EXPECT_EQ(flags.out, "m.jsonl");
  EXPECT_TRUE(flags.quiet);
  EXPECT_EQ(positional, std::vector<std::string>({"a.pbtxt", "b"}));
}

TEST(FlagParserTest, FlagsNotGivenKeepTheirDefaults) {
  Flags flags;
  std::vector<std::string> positional;
  ASSERT_TRUE(MakeParser(&flags).Parse({"job.pbtxt"}, &positional).ok());
  EXPECT_EQ(flags.steps, 5);
  EXPECT_EQ(flags.timeout, 1.5);
  EXPECT_FALSE(flags.quiet);
}

TEST(FlagParserTest, BooleansTakeExplicitValuesToo) {
  Flags flags;
  flags.quiet = true;
  std::vector<std::string> positional;
  ASSERT_TRUE(MakeParser(&flags).Parse({"--quiet=false"}, &positional).ok());
  EXPECT_FALSE(flags.quiet);
  EXPECT_FALSE(MakeParser(&flags).Parse({"--quiet=maybe"}, &positional).ok());
}

TEST(FlagParserTest, DoubleDashEndsTheFlags) {
  Flags flags;
  std::vector<std::string> positional;
  ASSERT_TRUE(MakeParser(&flags).Parse({"--", "--steps", "-x"}, &positional).ok());
  EXPECT_EQ(positional, std::vector<std::string>({"--steps", "-x"}));
  EXPECT_EQ(flags.steps, 5);
}

TEST(FlagParserTest, ErrorsNameTheFlagAndWhatIsWrong) {
  Flags flags;
  std::vector<std::string> positional;
  FlagParser parser = MakeParser(&flags);
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"--stpes", "3"}, "unknown flag --stpes"},
           {{"--steps"}, "--steps needs a value (N)"},
           {{"--steps", "three"}, "--steps: 'three' is not an integer"},
           {{"--steps=99999999999999999999"}, "--steps: '99999999999999999999' is not an integer"},
           {{"--timeout", "nan"}, "--timeout: 'nan' is not a number"},
           {{"--out="}, "--out needs a non-empty value"},
           {{"-q"}, "unknown flag '-q'"},
       }) {
    Status status = parser.Parse(c.args, &positional);
    ASSERT_FALSE(status.ok()) << c.message;
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find(c.message), std::string::npos) << status.message();
  }
}

TEST(FlagParserTest, HelpListsEveryFlagWithItsValueName) {
  Flags flags;
  std::string help = MakeParser(&flags).Help();
  EXPECT_NE(help.find("--steps N"), std::string::npos) << help;
  EXPECT_NE(help.find("--quiet"), std::string::npos) << help;
  EXPECT_NE(help.find("stall timeout"), std::string::npos) << help;
}

}  // namespace
}  // namespace cli
}  // namespace softwire
