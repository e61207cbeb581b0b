// GatheredVariables: parts from several nodes stitched into the logical variable, and what a
// node claims refused before the server allocates for it (the node_reports fuzz target's
// findings: a part or a logical type larger than the plan's variables, an offset that
// overflows).
#include "service/variable_parts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

namespace softwire {
namespace service {
namespace {

using ::testing::HasSubstr;

proto::VariablePartChunk Chunk(int64_t begin, int64_t end, int64_t part_bytes, int64_t offset,
                               const std::vector<float>& values) {
  proto::VariablePartChunk chunk;
  chunk.set_run_id(1);
  chunk.set_variable("w");
  chunk.mutable_logical()->set_dtype(proto::DATA_TYPE_FLOAT32);
  chunk.mutable_logical()->add_dims(4);
  chunk.set_split_axis(begin < 0 ? -1 : 0);
  chunk.set_split_begin(begin);
  chunk.set_split_end(end);
  chunk.set_part_bytes(part_bytes);
  chunk.set_offset(offset);
  chunk.set_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
  return chunk;
}

TEST(GatheredVariables, StitchesTheNodesPartsIntoTheVariable) {
  GatheredVariables gathered(16);
  ASSERT_TRUE(gathered.Add("node0", Chunk(0, 2, 8, 0, {1, 2})).ok());
  ASSERT_TRUE(gathered.Add("node1", Chunk(2, 4, 8, 0, {3})).ok());
  ASSERT_TRUE(gathered.Add("node1", Chunk(2, 4, 8, 4, {4})).ok());
  StatusOr<std::map<std::string, NpyArray>> variables = gathered.Take();
  ASSERT_TRUE(variables.ok()) << variables.status();
  const NpyArray& w = variables->at("w");
  ASSERT_EQ(w.data.size(), 16u);
  float values[4];
  std::memcpy(values, w.data.data(), sizeof(values));
  EXPECT_EQ(values[0], 1);
  EXPECT_EQ(values[3], 4);
}

TEST(GatheredVariables, RefusesAPartLargerThanThePlansVariables) {
  GatheredVariables gathered(PlanVariableBytes(proto::Plan()) + 16);
  Status refused = gathered.Add("node0", Chunk(-1, -1, int64_t{1} << 40, 0, {}));
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("node 'node0': variable 'w'"));
  EXPECT_THAT(refused.message(), HasSubstr("past the plan's 16 bytes"));
  // Two parts that fit alone but not together.
  EXPECT_TRUE(gathered.Add("node0", Chunk(0, 2, 8, 0, {})).ok());
  EXPECT_TRUE(gathered.Add("node0", Chunk(2, 4, 8, 0, {})).ok());
  EXPECT_EQ(gathered.Add("node0", Chunk(1, 3, 8, 0, {})).code(), StatusCode::kInvalidArgument);
}

TEST(GatheredVariables, RefusesALogicalTypeLargerThanThePlansVariablesOrNoTensor) {
  GatheredVariables gathered(16);
  proto::VariablePartChunk huge = Chunk(-1, -1, 4, 0, {1});
  huge.mutable_logical()->set_dims(0, int64_t{1} << 40);
  EXPECT_THAT(gathered.Add("node0", huge).message(), HasSubstr("no tensor or holds more"));
  proto::VariablePartChunk negative = Chunk(-1, -1, 4, 0, {1});
  negative.mutable_logical()->set_dims(0, -4);
  EXPECT_EQ(gathered.Add("node0", negative).code(), StatusCode::kInvalidArgument);
  proto::VariablePartChunk untyped = Chunk(-1, -1, 4, 0, {1});
  untyped.mutable_logical()->set_dtype(proto::DATA_TYPE_UNSPECIFIED);
  EXPECT_EQ(gathered.Add("node0", untyped).code(), StatusCode::kInvalidArgument);
}

TEST(GatheredVariables, RefusesAChunkWhoseOffsetOverflows) {
  GatheredVariables gathered(16);
  ASSERT_TRUE(gathered.Add("node0", Chunk(-1, -1, 16, 0, {1})).ok());
  Status refused =
      gathered.Add("node0", Chunk(-1, -1, 16, std::numeric_limits<int64_t>::max() - 2, {1, 2}));
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("does not fit its part"));
}

}  // namespace
}  // namespace service
}  // namespace softwire
