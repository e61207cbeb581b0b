// JSON for trace files: reading through nlohmann::json (Debian's nlohmann-json3-dev), and
// writing helpers that append to a string.
//
// Reading: ParseJson builds a whole document; ParseJsonStreaming hands the elements of one
// top-level array member to a callback one at a time and keeps none of them, so a trace of
// millions of events is read in bounded memory. The accessors below read a member or a
// fallback, the way every trace reader treats a missing or mistyped field.
//
//   StatusOr<Json> value = ParseJson(R"({"a": [1, 2.5, "x"]})");
//   const Json* a = Find(*value, "a");      // null when missing
//   int64_t count = IntOr(*value, "count", 0);
//
// Errors are DataLoss with "line L, column C: what" for malformed text, and
// "<key>[<index>]: what" for an element the streaming callback refused.
//
// Measured with bench/trace/trace_file_bench on a 66.7 MB trace (102,400 firings; 2 vCPU, one
// sitting, medians of 5, against the hand-written parser this replaced):
//   - reading (streamed, `softwire trace summary`): 0.48 s here, 0.28 s hand-written;
//   - checking (whole document): 1.55 s and 468 MiB peak here, 1.03 s and 806 MiB.
// Slower, on a cold path (a person reading a file); in exchange the lexer, numbers, strings and
// unicode, and the value type are nlohmann's, and json.cc keeps only a SAX adapter (depth limit,
// positions, streaming). Json is ordered_json: its small vector-backed objects read traces 1.6x
// faster than nlohmann::json's std::map ones, and keep the file's member order. Writing stays
// hand-written: the firing events alone take 0.015 s through these append helpers and 0.13 s built
// as Json and dumped (~9x), and a dump would change how ts and dur are printed; ExportChromeTrace
// writes the file at ~580 MB/s.
#ifndef SOFTWIRE_TRACE_JSON_H_
#define SOFTWIRE_TRACE_JSON_H_

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"

namespace softwire {
namespace trace {

using Json = nlohmann::ordered_json;

// Parses a whole document.
StatusOr<Json> ParseJson(const std::string& text);

// Parses a document whose top level is an object. The elements of the array member named
// `streamed_key` go to `on_element` one by one (and that member is left out of the result);
// an error from the callback stops the parse and is returned naming the element's index.
StatusOr<Json> ParseJsonStreaming(const std::string& text, const std::string& streamed_key,
                                  const std::function<Status(const Json&)>& on_element);

// The member `key` of an object, or null (also when `object` is no object).
const Json* Find(const Json& object, const std::string& key);
// Member `key` as a number / string, or `fallback` when missing or of another type. IntOr
// rounds a fractional number to the nearest integer.
double NumberOr(const Json& object, const std::string& key, double fallback);
int64_t IntOr(const Json& object, const std::string& key, int64_t fallback);
std::string StringOr(const Json& object, const std::string& key, const std::string& fallback);

// The numbers of an array value, as int32 (others skipped); empty for null or a non-array.
std::vector<int32_t> IntList(const Json* value);

// Member `key` of `object` when it is an array, else null.
const Json* ArrayMember(const Json& object, const std::string& key);

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
