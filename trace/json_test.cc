// The JSON reader and writing helpers used by trace files.
#include "trace/json.h"

#include <gtest/gtest.h>

namespace softwire {
namespace trace {
namespace {

TEST(JsonTest, ValuesOfEveryTypeParse) {
  StatusOr<JsonValue> value = ParseJson(
      R"({"n": -12.5e1, "i": 42, "s": "a\"b\\c\n\u00e9\ud83d\ude00", "t": true, "f": false,
          "z": null, "a": [1, [2], {}], "o": {"k": "v"}})");
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_DOUBLE_EQ(value->NumberOr("n", 0), -125);
  EXPECT_EQ(value->IntOr("i", 0), 42);
  EXPECT_EQ(value->StringOr("s", ""), "a\"b\\c\n\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_TRUE(value->Find("t")->boolean());
  EXPECT_FALSE(value->Find("f")->boolean());
  EXPECT_EQ(value->Find("z")->type(), JsonValue::Type::kNull);
  ASSERT_TRUE(value->Find("a")->is_array());
  EXPECT_EQ(value->Find("a")->array().size(), 3u);
  EXPECT_EQ(value->Find("o")->StringOr("k", ""), "v");
  EXPECT_EQ(value->Find("missing"), nullptr);
  EXPECT_EQ(value->IntOr("s", 7), 7) << "a string is no number";
}

TEST(JsonTest, ErrorsNameTheLineAndColumn) {
  StatusOr<JsonValue> value = ParseJson("{\n  \"a\": 1,\n  \"b\": tru\n}");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(value.status().message().find("line 3, column 8"), std::string::npos) << value.status();
  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "\"abc", "01x", "[1] 2", "{\"a\":-}",
                          "\"\\q\"", "\"\x01\""}) {
    EXPECT_FALSE(ParseJson(bad).ok()) << bad;
  }
}

TEST(JsonTest, DeepNestingIsRefusedNotRecursedInto) {
  std::string deep(100000, '[');
  StatusOr<JsonValue> value = ParseJson(deep);
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.status().message().find("nested too deeply"), std::string::npos);
}

TEST(JsonTest, StreamingHandsOverTheElementsOfOneMemberOneByOne) {
  std::vector<int64_t> seen;
  StatusOr<JsonValue> value =
      ParseJsonStreaming(R"({"before": 1, "events": [{"x": 1}, {"x": 2}, {"x": 3}], "after": "y"})",
                         "events", [&seen](const JsonValue& element) {
                           seen.push_back(element.IntOr("x", -1));
                           return Status::Ok();
                         });
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(seen, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(value->Find("events"), nullptr);
  EXPECT_EQ(value->IntOr("before", 0), 1);
  EXPECT_EQ(value->StringOr("after", ""), "y");

  StatusOr<JsonValue> refused =
      ParseJsonStreaming("{\"events\": [1,\n 2]}", "events", [](const JsonValue& element) {
        return element.number() == 2 ? DataLossError("two is wrong") : Status::Ok();
      });
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("line 2, column 2: two is wrong"), std::string::npos)
      << refused.status();
}

TEST(JsonTest, StreamingNeedsATopObjectAndStreamsOnlyItsOwnMember) {
  const auto ignore = [](const JsonValue&) { return Status::Ok(); };
  StatusOr<JsonValue> array = ParseJsonStreaming("[1, 2]", "events", ignore);
  ASSERT_FALSE(array.ok());
  EXPECT_NE(array.status().message().find("expected a JSON object"), std::string::npos)
      << array.status();
  // A nested member of the same name is an ordinary value.
  int streamed = 0;
  StatusOr<JsonValue> nested = ParseJsonStreaming(R"({"inner": {"events": [7, 8]}, "events": [1]})",
                                                  "events", [&](const JsonValue&) {
                                                    ++streamed;
                                                    return Status::Ok();
                                                  });
  ASSERT_TRUE(nested.ok()) << nested.status();
  EXPECT_EQ(streamed, 1);
  const JsonValue* inner = nested->Find("inner");
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
  StatusOr<JsonValue> value = ParseJson(out);
  ASSERT_TRUE(value.ok()) << value.status() << " in " << out;
  EXPECT_EQ(value->array()[0].string(), "tab\there \"quoted\" back\\slash \x01");
  EXPECT_DOUBLE_EQ(value->array()[1].number(), 1234.567);
  EXPECT_DOUBLE_EQ(value->array()[2].number(), 0.005);
  EXPECT_DOUBLE_EQ(value->array()[4].number(), -9007199254740991.0);
}

}  // namespace
}  // namespace trace
}  // namespace softwire
