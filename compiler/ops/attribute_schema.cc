#include "compiler/ops/attribute_schema.h"

#include <set>
#include <string>
#include <utility>

namespace softwire {
namespace compiler {
namespace {

std::string SchemaNames(const OpDefinition& definition) {
  if (definition.attributes.empty()) return "no attributes";
  std::string names;
  for (const AttributeSpec& spec : definition.attributes) {
    if (!names.empty()) names += ", ";
    names += spec.name;
  }
  return names;
}

const char* Article(AttributeKind kind) {
  return kind == AttributeKind::kInt || kind == AttributeKind::kInts ? "an" : "a";
}

// Checks `given` (already converted) and fills defaults, in schema order.
StatusOr<AttributeMap> CheckAndComplete(
    const OpDefinition& definition,
    const std::vector<std::pair<std::string, AttributeValue>>& given) {
  std::set<std::string> seen;
  for (const auto& [name, value] : given) {
    const AttributeSpec* spec = definition.FindAttribute(name);
    if (spec == nullptr) {
      return InvalidArgumentError("attribute '" + name + "' is not defined for op type '" +
                                  definition.type + "' (it has " + SchemaNames(definition) + ")");
    }
    if (!seen.insert(name).second) {
      return InvalidArgumentError("attribute '" + name + "' is given twice");
    }
    if (KindOf(value) != spec->kind) {
      return InvalidArgumentError("attribute '" + name + "' must be " + Article(spec->kind) + " " +
                                  AttributeKindName(spec->kind) + ", got " +
                                  AttributeKindName(KindOf(value)) + " " +
                                  AttributeValueToString(value));
    }
  }
  AttributeMap complete;
  for (const AttributeSpec& spec : definition.attributes) {
    const AttributeValue* value = nullptr;
    for (const auto& entry : given) {
      if (entry.first == spec.name) value = &entry.second;
    }
    if (value != nullptr) {
      complete.Set(spec.name, *value);
    } else if (!spec.required) {
      complete.Set(spec.name, spec.default_value);
    } else {
      return InvalidArgumentError("required attribute '" + spec.name + "' (" +
                                  AttributeKindName(spec.kind) + ") is missing");
    }
  }
  return complete;
}

}  // namespace

StatusOr<AttributeMap> ResolveAttributes(const OpDefinition& definition,
                                         const std::vector<proto::Attribute>& given) {
  std::vector<std::pair<std::string, AttributeValue>> values;
  for (const proto::Attribute& attribute : given) {
    if (attribute.name().empty()) return InvalidArgumentError("an attribute has no name");
    SOFTWIRE_ASSIGN_OR_RETURN(AttributeValue value, AttributeValueFromProto(attribute));
    values.emplace_back(attribute.name(), std::move(value));
  }
  return CheckAndComplete(definition, values);
}

StatusOr<AttributeMap> CompleteAttributes(const OpDefinition& definition,
                                          const AttributeMap& given) {
  StatusOr<AttributeMap> complete = CheckAndComplete(definition, given.entries());
  if (!complete.ok()) {
    return InternalError("compiler-made op of type '" + definition.type +
                         "': " + complete.status().message());
  }
  return complete;
}

}  // namespace compiler
}  // namespace softwire
