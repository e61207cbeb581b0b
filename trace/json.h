// A small JSON reader and writing helpers, enough for trace files (RFC 8259; no dependency).
//
// JsonValue is a plain tree. JsonParser reads one document; for large arrays it can hand the
// elements of one top-level member to a callback one at a time instead of keeping them, so a
// trace of millions of events is read in bounded memory.
//
//   StatusOr<JsonValue> value = ParseJson(R"({"a": [1, 2.5, "x"]})");
//   const JsonValue* a = value->Find("a");      // null when missing
//
// Errors are DataLoss with "line L, column C: what".
#ifndef SOFTWIRE_TRACE_JSON_H_
#define SOFTWIRE_TRACE_JSON_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace softwire {
namespace trace {

class JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

  Type type() const { return type_; }
  bool is_number() const { return type_ == Type::kNumber; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_object() const { return type_ == Type::kObject; }

  bool boolean() const { return boolean_; }
  double number() const { return number_; }
  const std::string& string() const { return string_; }
  const std::vector<JsonValue>& array() const { return array_; }
  const std::vector<std::pair<std::string, JsonValue>>& members() const { return members_; }

  // The member `key` of an object, or null (also when this is no object).
  const JsonValue* Find(const std::string& key) const;
  // Member `key` as a number / string, or `fallback` when missing or of another type.
  double NumberOr(const std::string& key, double fallback) const;
  int64_t IntOr(const std::string& key, int64_t fallback) const;
  std::string StringOr(const std::string& key, const std::string& fallback) const;

  static JsonValue Null() { return JsonValue(Type::kNull); }
  static JsonValue Bool(bool value);
  static JsonValue Number(double value);
  static JsonValue String(std::string value);
  static JsonValue Array(std::vector<JsonValue> values);
  static JsonValue Object(std::vector<std::pair<std::string, JsonValue>> members);

 private:
  explicit JsonValue(Type type) : type_(type) {}
  Type type_ = Type::kNull;
  bool boolean_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<JsonValue> array_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

// Parses a whole document.
StatusOr<JsonValue> ParseJson(const std::string& text);

// Parses a document whose top level is an object. The elements of the array member named
// `streamed_key` go to `on_element` one by one (and that member is left out of the result);
// an error from the callback stops the parse and is returned with the element's position.
StatusOr<JsonValue> ParseJsonStreaming(const std::string& text, const std::string& streamed_key,
                                       const std::function<Status(const JsonValue&)>& on_element);

// The numbers of an array value, as int32 (others skipped); empty for null or a non-array.
std::vector<int32_t> IntList(const JsonValue* value);

// Member `key` of `object` when it is an array, else null.
const JsonValue* ArrayMember(const JsonValue& object, const std::string& key);

// Appends `text` as a JSON string literal (quotes and escapes included).
void AppendJsonString(std::string* out, const std::string& text);
// Appends nanoseconds as microseconds with exactly three decimals ("12.345"), the form Chrome
// trace files use for ts and dur: exact, no floating point.
void AppendMicros(std::string* out, int64_t nanoseconds);
void AppendInt(std::string* out, int64_t value);
// Appends "[1,2,3]".
void AppendIntArray(std::string* out, const std::vector<int32_t>& values);
// A finite double with up to 6 significant decimals after the point; 0 for NaN/inf.
void AppendDouble(std::string* out, double value);

}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_JSON_H_
