// The JSON reading (nlohmann::json with depth limit, streaming and fallback accessors) and the
// writing helpers used by trace files: what is written reads back exactly.
#include "trace/json.h"

#include <gtest/gtest.h>

namespace softwire {
namespace trace {
namespace {

TEST(JsonTest, ValuesOfEveryTypeParse) {
  StatusOr<Json> value = ParseJson(
      R"({"n": -12.5e1, "i": 42, "s": "a\"b\\c\n\u00e9\ud83d\ude00", "t": true, "f": false,
          "z": null, "a": [1, [2], {}], "o": {"k": "v"}})");
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_DOUBLE_EQ(NumberOr(*value, "n", 0), -125);
  EXPECT_EQ(IntOr(*value, "i", 0), 42);
  EXPECT_EQ(IntOr(*value, "n", 0), -125) << "a fractional number rounds";
  EXPECT_EQ(StringOr(*value, "s", ""), "a\"b\\c\n\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_TRUE(Find(*value, "t")->get<bool>());
  EXPECT_FALSE(Find(*value, "f")->get<bool>());
  EXPECT_TRUE(Find(*value, "z")->is_null());
  ASSERT_TRUE(Find(*value, "a")->is_array());
  EXPECT_EQ(Find(*value, "a")->size(), 3u);
  EXPECT_EQ(StringOr(*Find(*value, "o"), "k", ""), "v");
  EXPECT_EQ(Find(*value, "missing"), nullptr);
  EXPECT_EQ(IntOr(*value, "s", 7), 7) << "a string is no number";
}

TEST(JsonTest, ErrorsNameTheLineAndColumn) {
  StatusOr<Json> value = ParseJson("{\n  \"a\": 1,\n  \"b\": tru\n}");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(value.status().message().find("line 3, column 10: syntax error"), std::string::npos)
      << value.status();
  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "\"abc", "01x", "[1] 2", "{\"a\":-}",
                          "\"\\q\"", "\"\x01\""}) {
    EXPECT_FALSE(ParseJson(bad).ok()) << bad;
  }
}

TEST(JsonTest, DeepNestingIsRefusedNotRecursedInto) {
  std::string deep(100000, '[');
  StatusOr<Json> value = ParseJson(deep);
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.status().message().find("nested too deeply"), std::string::npos);
}

TEST(JsonTest, StreamingHandsOverTheElementsOfOneMemberOneByOne) {
  std::vector<int64_t> seen;
  StatusOr<Json> value =
      ParseJsonStreaming(R"({"before": 1, "events": [{"x": 1}, {"x": 2}, {"x": 3}], "after": "y"})",
                         "events", [&seen](const Json& element) {
                           seen.push_back(IntOr(element, "x", -1));
                           return Status::Ok();
                         });
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(seen, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(Find(*value, "events"), nullptr);
  EXPECT_EQ(IntOr(*value, "before", 0), 1);
  EXPECT_EQ(StringOr(*value, "after", ""), "y");

  StatusOr<Json> refused =
      ParseJsonStreaming("{\"events\": [1,\n 2]}", "events", [](const Json& element) {
        return element.get<double>() == 2 ? DataLossError("two is wrong") : Status::Ok();
      });
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("events[1]: two is wrong"), std::string::npos)
      << refused.status();
}

TEST(JsonTest, StreamingNeedsATopObjectAndStreamsOnlyItsOwnMember) {
  const auto ignore = [](const Json&) { return Status::Ok(); };
  StatusOr<Json> array = ParseJsonStreaming("[1, 2]", "events", ignore);
  ASSERT_FALSE(array.ok());
  EXPECT_NE(array.status().message().find("expected a JSON object"), std::string::npos)
      << array.status();
  // A nested member of the same name is an ordinary value.
  int streamed = 0;
  StatusOr<Json> nested = ParseJsonStreaming(R"({"inner": {"events": [7, 8]}, "events": [1]})",
                                             "events", [&](const Json&) {
                                               ++streamed;
                                               return Status::Ok();
                                             });
  ASSERT_TRUE(nested.ok()) << nested.status();
  EXPECT_EQ(streamed, 1);
  const Json* inner = Find(*nested, "inner");
  ASSERT_NE(inner, nullptr);
  ASSERT_NE(ArrayMember(*inner, "events"), nullptr);
  EXPECT_EQ(IntList(ArrayMember(*inner, "events")), (std::vector<int32_t>{7, 8}));
}

TEST(JsonTest, WrittenStringsAndMicrosecondsReadBackExactly) {
  std::string out = "[";
  AppendJsonString(&out, "tab\there \"quoted\" back\\slash \x01");
  out += ",";
  AppendMicros(&out, 1234567);
  out += ",";
  AppendMicros(&out, 5);
  out += ",";
  AppendMicros(&out, 0);
  out += ",";
  AppendInt(&out, -9007199254740991);
  out += "]";
  EXPECT_NE(out.find("1234.567"), std::string::npos) << out;
  EXPECT_NE(out.find("0.005"), std::string::npos) << out;
  StatusOr<Json> value = ParseJson(out);
  ASSERT_TRUE(value.ok()) << value.status() << " in " << out;
  EXPECT_EQ((*value)[0].get<std::string>(), "tab\there \"quoted\" back\\slash \x01");
  EXPECT_DOUBLE_EQ((*value)[1].get<double>(), 1234.567);
  EXPECT_DOUBLE_EQ((*value)[2].get<double>(), 0.005);
  EXPECT_EQ((*value)[4].get<int64_t>(), -9007199254740991);
}

}  // namespace
}  // namespace trace
}  // namespace softwire
