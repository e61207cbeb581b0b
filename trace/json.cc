#include "trace/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace softwire {
namespace trace {

const JsonValue* JsonValue::Find(const std::string& key) const {
  if (type_ != Type::kObject) return nullptr;
  for (const auto& member : members_) {
    if (member.first == key) return &member.second;
  }
  return nullptr;
}

double JsonValue::NumberOr(const std::string& key, double fallback) const {
  const JsonValue* value = Find(key);
  return value != nullptr && value->is_number() ? value->number_ : fallback;
}

int64_t JsonValue::IntOr(const std::string& key, int64_t fallback) const {
  const JsonValue* value = Find(key);
  if (value == nullptr || !value->is_number() || !std::isfinite(value->number_)) return fallback;
  return static_cast<int64_t>(std::llround(value->number_));
}

std::string JsonValue::StringOr(const std::string& key, const std::string& fallback) const {
  const JsonValue* value = Find(key);
  return value != nullptr && value->is_string() ? value->string_ : fallback;
}

JsonValue JsonValue::Bool(bool value) {
  JsonValue v(Type::kBool);
  v.boolean_ = value;
  return v;
}

JsonValue JsonValue::Number(double value) {
  JsonValue v(Type::kNumber);
  v.number_ = value;
  return v;
}

JsonValue JsonValue::String(std::string value) {
  JsonValue v(Type::kString);
  v.string_ = std::move(value);
  return v;
}

JsonValue JsonValue::Array(std::vector<JsonValue> values) {
  JsonValue v(Type::kArray);
  v.array_ = std::move(values);
  return v;
}

JsonValue JsonValue::Object(std::vector<std::pair<std::string, JsonValue>> members) {
  JsonValue v(Type::kObject);
  v.members_ = std::move(members);
  return v;
}

namespace {

// Nesting deeper than this is refused rather than recursed into (a hostile file must not
// overflow the stack).
constexpr int kMaxDepth = 200;

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  StatusOr<JsonValue> ParseDocument(const std::string& streamed_key,
                                    const std::function<Status(const JsonValue&)>* on_element) {
    SkipSpace();
    JsonValue value = JsonValue::Null();
    Status status;
    if (on_element == nullptr) {
      status = ParseValue(0, &value);
    } else if (position_ < text_.size() && text_[position_] == '{') {
      status = ParseObject(0, &value, &streamed_key, on_element);
    } else {
      status = Error("expected a JSON object");
    }
    if (!status.ok()) return status;
    SkipSpace();
    if (position_ != text_.size()) return Error("unexpected text after the JSON value");
    return value;
  }

 private:
  Status Error(const std::string& what) const {
    size_t line = 1;
    size_t column = 1;
    for (size_t i = 0; i < position_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return DataLossError("line " + std::to_string(line) + ", column " + std::to_string(column) +
                         ": " + what);
  }

  void SkipSpace() {
    while (position_ < text_.size()) {
      char c = text_[position_];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') break;
      ++position_;
    }
  }

  bool Consume(char expected) {
    SkipSpace();
    if (position_ < text_.size() && text_[position_] == expected) {
      ++position_;
      return true;
    }
    return false;
  }

  Status StreamArray(const std::function<Status(const JsonValue&)>& on_element) {
    ++position_;  // '['
    if (Consume(']')) return Status::Ok();
    while (true) {
      SkipSpace();
      const size_t element_start = position_;
      JsonValue element = JsonValue::Null();
      SOFTWIRE_RETURN_IF_ERROR(ParseValue(2, &element));
      Status status = on_element(element);
      if (!status.ok()) {
        position_ = element_start;
        return Error(status.message());
      }
      if (Consume(',')) continue;
      if (Consume(']')) return Status::Ok();
      return Error("expected ',' or ']' in an array");
    }
  }

  Status ParseValue(int depth, JsonValue* out) {
    if (depth > kMaxDepth) return Error("nested too deeply");
    SkipSpace();
    if (position_ >= text_.size()) return Error("unexpected end of input");
    const char c = text_[position_];
    if (c == '{') return ParseObject(depth, out);
    if (c == '[') return ParseArray(depth, out);
    if (c == '"') {
      std::string text;
      SOFTWIRE_RETURN_IF_ERROR(ParseString(&text));
      *out = JsonValue::String(std::move(text));
      return Status::Ok();
    }
    if (c == 't' || c == 'f' || c == 'n') return ParseLiteral(out);
    return ParseNumber(out);
  }

  // The object at position_ ('{'). With `streamed_key`, the elements of the array member of
  // that name go to `on_element` one by one and the member is left out of `out`.
  Status ParseObject(int depth, JsonValue* out, const std::string* streamed_key = nullptr,
                     const std::function<Status(const JsonValue&)>* on_element = nullptr) {
    ++position_;
    std::vector<std::pair<std::string, JsonValue>> members;
    if (Consume('}')) {
      *out = JsonValue::Object(std::move(members));
      return Status::Ok();
    }
    while (true) {
      SkipSpace();
      std::string key;
      SOFTWIRE_RETURN_IF_ERROR(ParseString(&key));
      if (!Consume(':')) return Error("expected ':' after a member name");
      SkipSpace();
      if (streamed_key != nullptr && key == *streamed_key && position_ < text_.size() &&
          text_[position_] == '[') {
        SOFTWIRE_RETURN_IF_ERROR(StreamArray(*on_element));
      } else {
        JsonValue value = JsonValue::Null();
        SOFTWIRE_RETURN_IF_ERROR(ParseValue(depth + 1, &value));
        members.emplace_back(std::move(key), std::move(value));
      }
      if (Consume(',')) continue;
      if (Consume('}')) break;
      return Error("expected ',' or '}' in an object");
    }
    *out = JsonValue::Object(std::move(members));
    return Status::Ok();
  }

  Status ParseArray(int depth, JsonValue* out) {
    ++position_;
    std::vector<JsonValue> values;
    if (Consume(']')) {
      *out = JsonValue::Array(std::move(values));
      return Status::Ok();
    }
    while (true) {
      JsonValue value = JsonValue::Null();
      SOFTWIRE_RETURN_IF_ERROR(ParseValue(depth + 1, &value));
      values.push_back(std::move(value));
      if (Consume(',')) continue;
      if (Consume(']')) break;
      return Error("expected ',' or ']' in an array");
    }
    *out = JsonValue::Array(std::move(values));
    return Status::Ok();
  }

  Status ParseLiteral(JsonValue* out) {
    auto matches = [this](const char* word) {
      return text_.compare(position_, std::char_traits<char>::length(word), word) == 0;
    };
    if (matches("true")) {
      position_ += 4;
      *out = JsonValue::Bool(true);
    } else if (matches("false")) {
      position_ += 5;
      *out = JsonValue::Bool(false);
    } else if (matches("null")) {
      position_ += 4;
      *out = JsonValue::Null();
    } else {
      return Error("unexpected character");
    }
    return Status::Ok();
  }

  Status ParseNumber(JsonValue* out) {
    const size_t start = position_;
    if (position_ < text_.size() && text_[position_] == '-') ++position_;
    if (position_ >= text_.size() || !IsDigit(text_[position_])) {
      return Error("unexpected character");
    }
    while (position_ < text_.size() &&
           (IsDigit(text_[position_]) || text_[position_] == '.' || text_[position_] == 'e' ||
            text_[position_] == 'E' || text_[position_] == '+' || text_[position_] == '-')) {
      ++position_;
    }
    double value = 0;
    const char* begin = text_.data() + start;
    const char* end = text_.data() + position_;
    std::from_chars_result result = std::from_chars(begin, end, value);
    if (result.ec != std::errc() || result.ptr != end) {
      position_ = start;
      return Error("bad number");
    }
    *out = JsonValue::Number(value);
    return Status::Ok();
  }

  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }

  static int HexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  Status ParseHex4(uint32_t* value) {
    if (position_ + 4 > text_.size()) return Error("truncated \\u escape");
    uint32_t result = 0;
    for (int i = 0; i < 4; ++i) {
      int digit = HexValue(text_[position_ + static_cast<size_t>(i)]);
      if (digit < 0) return Error("bad \\u escape");
      result = result * 16 + static_cast<uint32_t>(digit);
    }
    position_ += 4;
    *value = result;
    return Status::Ok();
  }

  static void AppendUtf8(std::string* out, uint32_t code) {
    if (code < 0x80) {
      out->push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (code >> 6)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else if (code < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (code >> 12)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (code >> 18)));
      out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
  }

  Status ParseString(std::string* out) {
    if (position_ >= text_.size() || text_[position_] != '"') return Error("expected a string");
    ++position_;
    while (true) {
      if (position_ >= text_.size()) return Error("unterminated string");
      const char c = text_[position_++];
      if (c == '"') return Status::Ok();
      if (static_cast<unsigned char>(c) < 0x20) {
        --position_;
        return Error("control character in a string");
      }
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (position_ >= text_.size()) return Error("unterminated string");
      const char escape = text_[position_++];
      switch (escape) {
        case '"':
        case '\\':
        case '/':
          out->push_back(escape);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t code = 0;
          SOFTWIRE_RETURN_IF_ERROR(ParseHex4(&code));
          if (code >= 0xD800 && code < 0xDC00 && text_.compare(position_, 2, "\\u") == 0) {
            position_ += 2;
            uint32_t low = 0;
            SOFTWIRE_RETURN_IF_ERROR(ParseHex4(&low));
            if (low < 0xDC00 || low >= 0xE000) return Error("bad surrogate pair");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          }
          AppendUtf8(out, code);
          break;
        }
        default:
          --position_;
          return Error("bad escape in a string");
      }
    }
  }

  const std::string& text_;
  size_t position_ = 0;
};

}  // namespace

StatusOr<JsonValue> ParseJson(const std::string& text) {
  return Parser(text).ParseDocument("", nullptr);
}

StatusOr<JsonValue> ParseJsonStreaming(const std::string& text, const std::string& streamed_key,
                                       const std::function<Status(const JsonValue&)>& on_element) {
  return Parser(text).ParseDocument(streamed_key, &on_element);
}

void AppendJsonString(std::string* out, const std::string& text) {
  out->push_back('"');
  for (char c : text) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
          out->append(escaped);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

void AppendInt(std::string* out, int64_t value) {
  char buffer[24];
  std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, result.ptr);
}

void AppendMicros(std::string* out, int64_t nanoseconds) {
  if (nanoseconds < 0) {
    out->push_back('-');
    // -INT64_MIN overflows; no trace time gets near it.
    nanoseconds = -nanoseconds;
  }
  AppendInt(out, nanoseconds / 1000);
  const int64_t fraction = nanoseconds % 1000;
  out->push_back('.');
  out->push_back(static_cast<char>('0' + fraction / 100));
  out->push_back(static_cast<char>('0' + fraction / 10 % 10));
  out->push_back(static_cast<char>('0' + fraction % 10));
}

void AppendDouble(std::string* out, double value) {
  if (!std::isfinite(value)) value = 0;
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  out->append(buffer);
}

void AppendIntArray(std::string* out, const std::vector<int32_t>& values) {
  out->push_back('[');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendInt(out, values[i]);
  }
  out->push_back(']');
}

std::vector<int32_t> IntList(const JsonValue* value) {
  std::vector<int32_t> list;
  if (value == nullptr || !value->is_array()) return list;
  for (const JsonValue& element : value->array()) {
    if (element.is_number()) list.push_back(static_cast<int32_t>(std::llround(element.number())));
  }
  return list;
}

const JsonValue* ArrayMember(const JsonValue& object, const std::string& key) {
  const JsonValue* value = object.Find(key);
  return value != nullptr && value->is_array() ? value : nullptr;
}

}  // namespace trace
}  // namespace softwire
