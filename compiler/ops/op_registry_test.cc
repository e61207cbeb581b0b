// The registry against docs/OPS.md, and attribute schema checks.
#include "compiler/ops/op_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "base/file.h"
#include "compiler/ops/attribute_schema.h"

namespace softwire {
namespace compiler {
namespace {

using ::testing::HasSubstr;

bool IsOpName(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// Op names of the "### name (inputs) -> outputs" headings of docs/OPS.md; a heading may list
// two ops ("### reduce_sum (x) -> y, reduce_mean (x) -> y"): every ", "-separated piece that
// starts with "name (".
std::set<std::string> DocumentedOps() {
  StatusOr<std::string> text = ReadFile("docs/OPS.md");
  CHECK(text.ok()) << text.status();
  std::set<std::string> names;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("### ", 0) != 0) continue;
    std::string title = line.substr(4);
    for (size_t begin = 0; begin < title.size();) {
      size_t end = title.find(", ", begin);
      if (end == std::string::npos) end = title.size();
      std::string piece = title.substr(begin, end - begin);
      size_t parenthesis = piece.find(" (");
      if (parenthesis != std::string::npos && IsOpName(piece.substr(0, parenthesis))) {
        names.insert(piece.substr(0, parenthesis));
      }
      begin = end + 2;
    }
  }
  return names;
}

TEST(OpRegistry, DefinesExactlyTheOpsDocsOpsListsIncludingInternalOnes) {
  std::set<std::string> documented = DocumentedOps();
  ASSERT_GT(documented.size(), 30u);
  std::vector<std::string> types = MakeStandardOps().Types();
  EXPECT_EQ(std::set<std::string>(types.begin(), types.end()), documented);
}

TEST(OpRegistry, EveryDefinitionInfersAndCostsAndOnlyGraphOpsHaveGradients) {
  OpRegistry registry = MakeStandardOps();
  for (const std::string& type : registry.Types()) {
    const OpDefinition* definition = registry.Find(type);
    EXPECT_TRUE(definition->infer) << type;
    EXPECT_TRUE(definition->cost) << type;
    if (definition->usage == OpUsage::kActorKind) {
      EXPECT_FALSE(definition->gradient) << type;
    }
  }
}

TEST(OpRegistry, SuggestsTheClosestTypeForATypo) {
  StatusOr<const OpDefinition*> found = MakeStandardOps().Lookup("matmull");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().message(), "unknown op type 'matmull' (did you mean 'matmul'?)");
}

proto::Attribute BoolAttribute(const std::string& name, bool value) {
  proto::Attribute attribute;
  attribute.set_name(name);
  attribute.set_bool_(value);
  return attribute;
}

TEST(AttributeSchema, FillsDefaultsInSchemaOrder) {
  OpRegistry registry = MakeStandardOps();
  StatusOr<AttributeMap> attributes =
      ResolveAttributes(*registry.Find("matmul"), {BoolAttribute("transpose_b", true)});
  ASSERT_TRUE(attributes.ok()) << attributes.status();
  EXPECT_EQ(attributes->ToString(), "{transpose_a: false, transpose_b: true}");
}

TEST(AttributeSchema, NamesAnUnknownAttributeAndTheKnownOnes) {
  OpRegistry registry = MakeStandardOps();
  StatusOr<AttributeMap> attributes =
      ResolveAttributes(*registry.Find("matmul"), {BoolAttribute("transpose", true)});
  EXPECT_EQ(attributes.status().message(),
            "attribute 'transpose' is not defined for op type 'matmul' (it has transpose_a, "
            "transpose_b)");
}

TEST(AttributeSchema, NamesTheKindAnAttributeShouldHave) {
  OpRegistry registry = MakeStandardOps();
  proto::Attribute factor;
  factor.set_name("factor");
  factor.set_int_(2);
  StatusOr<AttributeMap> attributes = ResolveAttributes(*registry.Find("scale"), {factor});
  EXPECT_EQ(attributes.status().message(), "attribute 'factor' must be a float, got int 2");
}

TEST(AttributeSchema, ReportsAMissingRequiredAttribute) {
  OpRegistry registry = MakeStandardOps();
  StatusOr<AttributeMap> attributes = ResolveAttributes(*registry.Find("reshape"), {});
  EXPECT_EQ(attributes.status().message(), "required attribute 'shape' (ints) is missing");
}

TEST(AttributeSchema, RejectsAnAttributeGivenTwiceOrWithoutValue) {
  OpRegistry registry = MakeStandardOps();
  const OpDefinition& matmul = *registry.Find("matmul");
  EXPECT_THAT(ResolveAttributes(
                  matmul, {BoolAttribute("transpose_a", true), BoolAttribute("transpose_a", false)})
                  .status()
                  .message(),
              HasSubstr("given twice"));
  proto::Attribute empty;
  empty.set_name("transpose_a");
  EXPECT_THAT(ResolveAttributes(matmul, {empty}).status().message(), HasSubstr("has no value"));
}

TEST(AttributeSchema, TreatsBadAttributesOfCompilerMadeOpsAsInternal) {
  OpRegistry registry = MakeStandardOps();
  AttributeMap attributes;
  attributes.Set("factor", int64_t{2});
  StatusOr<AttributeMap> complete = CompleteAttributes(*registry.Find("scale"), attributes);
  EXPECT_EQ(complete.status().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
