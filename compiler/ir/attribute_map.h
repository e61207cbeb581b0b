// AttributeMap: the named, typed attributes of one op, with typed getters.
//
// Attributes are validated against the op's schema once, when the op enters the graph (see
// ops/attribute_schema.h); after that every schema attribute is present with its default filled
// in, so the getters CHECK instead of returning errors: a missing or ill-typed attribute past
// validation is a compiler bug.
//
//   AttributeMap attributes;
//   attributes.Set("transpose_b", true);
//   bool transpose_b = attributes.GetBool("transpose_b");
#ifndef SOFTWIRE_COMPILER_IR_ATTRIBUTE_MAP_H_
#define SOFTWIRE_COMPILER_IR_ATTRIBUTE_MAP_H_

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/status.h"
#include "proto/tensor.pb.h"

namespace softwire {
namespace compiler {

// The kinds an attribute may have; the order matches AttributeValue's alternatives.
enum class AttributeKind { kInt = 0, kFloat = 1, kBool = 2, kString = 3, kInts = 4 };

using AttributeValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>>;

// "int", "float", "bool", "string", "ints".
const char* AttributeKindName(AttributeKind kind);

AttributeKind KindOf(const AttributeValue& value);

// "true", "0.5", "[0, 2, 1]", "\"text\"". Floats print with up to 9 significant digits so a
// float32 value round-trips.
std::string AttributeValueToString(const AttributeValue& value);

// Reads the value of a proto attribute. InvalidArgument when no value is set.
StatusOr<AttributeValue> AttributeValueFromProto(const proto::Attribute& attribute);
proto::Attribute AttributeToProto(const std::string& name, const AttributeValue& value);
// The same, written into `attribute` (no temporary: plans hold millions of attributes).
void AttributeToProto(const std::string& name, const AttributeValue& value,
                      proto::Attribute* attribute);

// An ordered list of (name, value); order is the order of Set calls (the schema's order once
// validated), which keeps plans and dumps stable. Not thread-safe for writes; a value type.
class AttributeMap {
 public:
  // Sets `name`, replacing an existing value in place.
  void Set(const std::string& name, AttributeValue value);

  bool Contains(const std::string& name) const { return Find(name) != nullptr; }
  // Null when absent.
  const AttributeValue* Find(const std::string& name) const;

  // Typed getters. CHECK-fail when the attribute is absent or of another kind.
  int64_t GetInt(const std::string& name) const;
  double GetFloat(const std::string& name) const;
  bool GetBool(const std::string& name) const;
  const std::string& GetString(const std::string& name) const;
  const std::vector<int64_t>& GetInts(const std::string& name) const;

  const std::vector<std::pair<std::string, AttributeValue>>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

  // "{transpose_b: true, axes: [0, 1]}"; "{}" when empty.
  std::string ToString() const;

 private:
  template <typename T>
  const T& Get(const std::string& name, AttributeKind kind) const;

  std::vector<std::pair<std::string, AttributeValue>> entries_;
};

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_IR_ATTRIBUTE_MAP_H_
