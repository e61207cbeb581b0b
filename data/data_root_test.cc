#include "data/data_root.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace softwire {
namespace data {
namespace {

using ::testing::HasSubstr;

TEST(DataRoot, ResolvesRelativePathsUnderTheRootLexically) {
  StatusOr<std::string> path = ResolveDataPath(DataRoot("/data/job"), "./x/../y.npy");
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, "/data/job/y.npy");
}

TEST(DataRoot, KeepsAbsolutePathsUnlessConfined) {
  StatusOr<std::string> kept = ResolveDataPath(DataRoot("/data/job"), "/opt/w.npy");
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(*kept, "/opt/w.npy");
  // No root is needed for a path that does not use it.
  EXPECT_TRUE(ResolveDataPath(DataRoot(), "/opt/w.npy").ok());

  DataRoot confined("/data/job");
  confined.confined = true;
  StatusOr<std::string> refused = ResolveDataPath(confined, "/opt/w.npy");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("'/opt/w.npy' leaves the data root"));
  EXPECT_FALSE(ResolveDataPath(confined, "a/../../w.npy").ok());
  EXPECT_TRUE(ResolveDataPath(confined, "a/../w.npy").ok());
}

TEST(DataRoot, ARelativePathWithoutARootIsAnError) {
  StatusOr<std::string> path = ResolveDataPath(DataRoot(), "x.npy");
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(path.status().message(), HasSubstr("'x.npy' is relative and no data root"));
}

TEST(DataRoot, TellsWhetherAPathStaysInTheRoot) {
  EXPECT_TRUE(StaysInDataRoot("x.npy"));
  EXPECT_TRUE(StaysInDataRoot("./a/b/../c.npy"));
  EXPECT_TRUE(StaysInDataRoot("a/../b"));
  EXPECT_FALSE(StaysInDataRoot("../x.npy"));
  EXPECT_FALSE(StaysInDataRoot("a/../../x.npy"));
  EXPECT_FALSE(StaysInDataRoot("/x.npy"));
  EXPECT_FALSE(StaysInDataRoot(""));
}

}  // namespace
}  // namespace data
}  // namespace softwire
