#include "compiler/ir/attribute_map.h"

#include <gtest/gtest.h>

namespace softwire {
namespace compiler {
namespace {

TEST(AttributeMap, KeepsInsertionOrderAndReplacesInPlace) {
  AttributeMap attributes;
  attributes.Set("b", true);
  attributes.Set("a", int64_t{3});
  attributes.Set("b", false);
  EXPECT_EQ(attributes.ToString(), "{b: false, a: 3}");
  EXPECT_FALSE(attributes.GetBool("b"));
  EXPECT_EQ(attributes.GetInt("a"), 3);
}

TEST(AttributeMap, RoundTripsEveryKindThroughProto) {
  AttributeMap attributes;
  attributes.Set("i", int64_t{-4});
  attributes.Set("f", 0.125);
  attributes.Set("b", true);
  attributes.Set("s", std::string("text"));
  attributes.Set("l", std::vector<int64_t>{0, 2, 1});
  attributes.Set("empty", std::vector<int64_t>{});
  for (const auto& [name, value] : attributes.entries()) {
    proto::Attribute attribute = AttributeToProto(name, value);
    StatusOr<AttributeValue> back = AttributeValueFromProto(attribute);
    ASSERT_TRUE(back.ok()) << name;
    EXPECT_EQ(*back, value) << name;
  }
}

TEST(AttributeMap, PrintsFloatsSoFloat32ValuesRoundTrip) {
  EXPECT_EQ(AttributeValueToString(0.35355339), "0.35355339");
  EXPECT_EQ(AttributeValueToString(1e-5), "1e-05");
}

TEST(AttributeMap, GettersCheckTheKind) {
  AttributeMap attributes;
  attributes.Set("x", int64_t{1});
  EXPECT_DEATH(attributes.GetFloat("x"), "attribute 'x' is int, not float");
  EXPECT_DEATH(attributes.GetBool("missing"), "attribute 'missing' is missing");
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
