// Parts of tensors on meshes.
#include "placement/sbp.h"

#include <gtest/gtest.h>

namespace softwire {
namespace placement {
namespace {

NdSbp Nd(Sbp dp, Sbp tp) {
  return {dp, tp};
}

TEST(Sbp, PrintsAndParsesSplitsBroadcastsAndPartials) {
  EXPECT_EQ(NdSbpToString(Nd(Sbp::Split(0), Sbp::Broadcast())), "(S(0), B)");
  EXPECT_EQ(NdSbpToString(Nd(Sbp::Partial(), Sbp::Split(1))), "(P, S(1))");
  EXPECT_EQ(*ParseSbp("S(2)"), Sbp::Split(2));
  EXPECT_EQ(*ParseSbp(" S1 "), Sbp::Split(1));
  EXPECT_EQ(*ParseSbp("P"), Sbp::Partial());
  EXPECT_FALSE(ParseSbp("S(x)").ok());
}

TEST(Sbp, GivesEachCoordinateItsBalancedSliceWithTheDpAxisOuter) {
  const MeshShape shape = {2, 2};
  const std::vector<int64_t> dims = {8, 6};
  // Both mesh axes split axis 0 into 4 parts of 2 rows; (1, 0) holds part 2.
  NdSbp both = Nd(Sbp::Split(0), Sbp::Split(0));
  TensorBox box = PartBox(dims, both, shape, {1, 0});
  EXPECT_EQ(box.begin, (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(box.end, (std::vector<int64_t>{6, 6}));
  EXPECT_EQ(LocalDims(dims, both, shape), (std::vector<int64_t>{2, 6}));
  // Rows over dp, columns over tp.
  NdSbp grid = Nd(Sbp::Split(0), Sbp::Split(1));
  TensorBox cell = PartBox(dims, grid, shape, {0, 1});
  EXPECT_EQ(cell.begin, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(cell.end, (std::vector<int64_t>{4, 6}));
  // P and B leave the box whole.
  EXPECT_EQ(PartBox(dims, Nd(Sbp::Partial(), Sbp::Broadcast()), shape, {1, 1}), WholeBox(dims));
}

TEST(Sbp, OffersOnlyEvenSplitsOfAxesThatExist) {
  const MeshShape shape = {2, 2};
  EXPECT_TRUE(SplitsEvenly({8, 6}, Nd(Sbp::Split(0), Sbp::Split(1)), shape));
  EXPECT_FALSE(SplitsEvenly({6, 6}, Nd(Sbp::Split(0), Sbp::Split(0)), shape));
  EXPECT_FALSE(SplitsEvenly({8, 5}, Nd(Sbp::Broadcast(), Sbp::Split(1)), shape));
  EXPECT_FALSE(SplitsEvenly({8}, Nd(Sbp::Split(1), Sbp::Broadcast()), shape));
}

TEST(Sbp, NormalizesMeshAxesOfExtentOneToBroadcast) {
  EXPECT_EQ(Normalized(Nd(Sbp::Partial(), Sbp::Split(0)), {1, 4}),
            Nd(Sbp::Broadcast(), Sbp::Split(0)));
  EXPECT_EQ(SplitAxes(Nd(Sbp::Split(1), Sbp::Split(1))), std::vector<int>{1});
}

TEST(DeviceMesh, MapsLinearIndicesToCoordinatesTpFastest) {
  DeviceMesh mesh{{4, 5, 6, 7, 8, 9}, {3, 2}};
  EXPECT_EQ(mesh.Coordinate(3), (MeshCoordinate{1, 1}));
  EXPECT_EQ(mesh.Linear({2, 0}), 4);
  EXPECT_EQ(mesh.IndexOf(9), 5);
  EXPECT_EQ(mesh.IndexOf(3), -1);
  EXPECT_EQ(mesh.ToString(), "[4, 5, 6, 7, 8, 9] as 3x2");
}

}  // namespace
}  // namespace placement
}  // namespace softwire
