#include "trace/json.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

namespace softwire {
namespace trace {
namespace {

// Nesting deeper than this is refused (a hostile file must not exhaust memory or the stack of
// whoever walks the result).
constexpr int kMaxDepth = 200;

// "line L, column C" of the last character before `end` that is not white space: where the
// parser stopped reading a bad token, rather than the newline after it.
std::string PositionBefore(const std::string& text, size_t end) {
  size_t last = std::min(end, text.size());
  while (last > 0 && std::isspace(static_cast<unsigned char>(text[last - 1]))) --last;
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i + 1 < last; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

using DomBuilder = nlohmann::detail::json_sax_dom_parser<Json>;

// A SAX handler for Json::sax_parse that builds the document with nlohmann's own DOM builder
// and adds what the trace readers need: a depth limit, error positions as "line L, column C",
// and (with a streamed key) the elements of one top-level array member built one at a time,
// handed to a callback and dropped. nlohmann's parser callbacks could stream too, but their
// DOM builder rescans the parent container at every object's end: checking a 67 MB trace took
// 24 s that way instead of 1.5 s (bench/trace/trace_file_bench).
class SaxReader {
 public:
  using string_t = Json::string_t;

  SaxReader(const std::string& text, const std::string* streamed_key,
            const std::function<Status(const Json&)>* on_element)
      : text_(text),
        streamed_key_(streamed_key),
        on_element_(on_element),
        document_builder_(document_, /*allow_exceptions_=*/false) {}

  StatusOr<Json> Read() {
    const bool parsed = Json::sax_parse(text_, this);
    if (!error_.ok()) return error_;
    if (!parsed) return DataLossError("malformed JSON");
    return std::move(document_);
  }

  // The SAX interface of nlohmann::json_sax<Json>.
  bool null() {
    return Value([](DomBuilder& builder) { return builder.null(); }, [] { return Json(); });
  }
  bool boolean(bool value) {
    return Value([value](DomBuilder& builder) { return builder.boolean(value); },
                 [value] { return Json(value); });
  }
  bool number_integer(Json::number_integer_t value) {
    return Value([value](DomBuilder& builder) { return builder.number_integer(value); },
                 [value] { return Json(value); });
  }
  bool number_unsigned(Json::number_unsigned_t value) {
    return Value([value](DomBuilder& builder) { return builder.number_unsigned(value); },
                 [value] { return Json(value); });
  }
  bool number_float(Json::number_float_t value, const string_t& text) {
    return Value([&](DomBuilder& builder) { return builder.number_float(value, text); },
                 [value] { return Json(value); });
  }
  bool string(string_t& value) {
    return Value([&value](DomBuilder& builder) { return builder.string(value); },
                 [&value] { return Json(value); });
  }
  bool binary(Json::binary_t& value) {
    return Value([&value](DomBuilder& builder) { return builder.binary(value); },
                 [&value] { return Json(value); });
  }
  bool start_object(std::size_t size) {
    if (!Open(/*is_object=*/true)) return false;
    return Start([size](DomBuilder& builder) { return builder.start_object(size); });
  }
  bool start_array(std::size_t size) {
    if (!Open(/*is_object=*/false)) return false;
    if (depth_ == 2 && pending_key_) {  // The streamed member is an array: stream it.
      pending_key_ = false;
      streaming_ = true;
      return true;
    }
    return Start([size](DomBuilder& builder) { return builder.start_array(size); });
  }
  bool key(string_t& key) {
    if (depth_ == 1 && streamed_key_ != nullptr && key == *streamed_key_) {
      pending_key_ = true;  // Streamed if its value is an array, else an ordinary member.
      return true;
    }
    return Builder().key(key);
  }
  bool end_object() {
    return End([](DomBuilder& builder) { return builder.end_object(); });
  }
  bool end_array() {
    if (streaming_ && depth_ == 2) {  // The streamed member ends; it is left out.
      streaming_ = false;
      --depth_;
      return true;
    }
    return End([](DomBuilder& builder) { return builder.end_array(); });
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& error) {
    // nlohmann's "[json.exception.parse_error.101] parse error at line 4, column 0: what"
    // becomes "line 3, column 10: what", counted to the last character it read.
    std::string what = error.what();
    const size_t colon = what.find(": ", what.find("parse error"));
    if (colon != std::string::npos) what = what.substr(colon + 2);
    error_ = DataLossError(PositionBefore(text_, position) + ": " + what);
    return false;
  }

 private:
  // The builder the next event goes to: the current streamed element's, or the document's.
  DomBuilder& Builder() { return element_builder_ ? *element_builder_ : document_builder_; }

  // Forwards the key held back for the streamed member when its value is no array.
  bool FlushPendingKey() {
    if (!pending_key_) return true;
    pending_key_ = false;
    string_t key = *streamed_key_;
    return document_builder_.key(key);
  }

  bool Open(bool is_object) {
    if (depth_ == 0 && streamed_key_ != nullptr && !is_object) return NotAnObject();
    if (++depth_ > kMaxDepth) {
      error_ =
          DataLossError("nested too deeply (more than " + std::to_string(kMaxDepth) + " levels)");
      return false;
    }
    return true;
  }

  template <typename Forward>
  bool Start(Forward forward) {
    if (!FlushPendingKey()) return false;
    if (streaming_ && depth_ == 3) {  // An element of the streamed array begins.
      element_ = Json();
      element_builder_.emplace(element_, /*allow_exceptions_=*/false);
    }
    return forward(Builder());
  }

  template <typename Forward>
  bool End(Forward forward) {
    const bool ok = forward(Builder());
    --depth_;
    if (ok && streaming_ && depth_ == 2) {  // The element is complete.
      element_builder_.reset();
      return HandOver(element_);
    }
    return ok;
  }

  template <typename Forward, typename Make>
  bool Value(Forward forward, Make make) {
    if (depth_ == 0 && streamed_key_ != nullptr) return NotAnObject();
    if (!FlushPendingKey()) return false;
    if (streaming_ && depth_ == 2) return HandOver(make());
    return forward(Builder());
  }

  bool HandOver(const Json& element) {
    Status status = (*on_element_)(element);
    if (!status.ok()) {
      error_ =
          DataLossError(*streamed_key_ + "[" + std::to_string(index_) + "]: " + status.message());
      return false;
    }
    ++index_;
    return true;
  }

  bool NotAnObject() {
    error_ = DataLossError("expected a JSON object");
    return false;
  }

  const std::string& text_;
  const std::string* streamed_key_;  // Null: nothing is streamed.
  const std::function<Status(const Json&)>* on_element_;
  Json document_;
  DomBuilder document_builder_;
  Json element_;
  std::optional<DomBuilder> element_builder_;  // While an element of the stream is built.
  int depth_ = 0;                              // Containers open.
  bool pending_key_ = false;  // The streamed key was read; its value decides what it is.
  bool streaming_ = false;    // Inside the streamed array.
  int64_t index_ = 0;         // Of the next streamed element.
  Status error_;
};

}  // namespace

StatusOr<Json> ParseJson(const std::string& text) {
  return SaxReader(text, nullptr, nullptr).Read();
}

StatusOr<Json> ParseJsonStreaming(const std::string& text, const std::string& streamed_key,
                                  const std::function<Status(const Json&)>& on_element) {
  return SaxReader(text, &streamed_key, &on_element).Read();
}

const Json* Find(const Json& object, const std::string& key) {
  if (!object.is_object()) return nullptr;
  auto found = object.find(key);
  return found == object.end() ? nullptr : &*found;
}

double NumberOr(const Json& object, const std::string& key, double fallback) {
  const Json* value = Find(object, key);
  return value != nullptr && value->is_number() ? value->get<double>() : fallback;
}

int64_t IntOr(const Json& object, const std::string& key, int64_t fallback) {
  const Json* value = Find(object, key);
  if (value == nullptr || !value->is_number()) return fallback;
  if (value->is_number_integer()) return value->get<int64_t>();
  const double number = value->get<double>();
  return std::isfinite(number) ? static_cast<int64_t>(std::llround(number)) : fallback;
}

std::string StringOr(const Json& object, const std::string& key, const std::string& fallback) {
  const Json* value = Find(object, key);
  return value != nullptr && value->is_string() ? value->get<std::string>() : fallback;
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

std::vector<int32_t> IntList(const Json* value) {
  std::vector<int32_t> list;
  if (value == nullptr || !value->is_array()) return list;
  for (const Json& element : *value) {
    if (element.is_number_integer()) {
      list.push_back(static_cast<int32_t>(element.get<int64_t>()));
    } else if (element.is_number()) {
      list.push_back(static_cast<int32_t>(std::llround(element.get<double>())));
    }
  }
  return list;
}

const Json* ArrayMember(const Json& object, const std::string& key) {
  const Json* value = Find(object, key);
  return value != nullptr && value->is_array() ? value : nullptr;
}

}  // namespace trace
}  // namespace softwire
