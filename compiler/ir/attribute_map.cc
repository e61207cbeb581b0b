#include "compiler/ir/attribute_map.h"

#include <cstdio>

namespace softwire {
namespace compiler {

const char* AttributeKindName(AttributeKind kind) {
  switch (kind) {
    case AttributeKind::kInt:
      return "int";
    case AttributeKind::kFloat:
      return "float";
    case AttributeKind::kBool:
      return "bool";
    case AttributeKind::kString:
      return "string";
    case AttributeKind::kInts:
      return "ints";
  }
  return "unknown";
}

AttributeKind KindOf(const AttributeValue& value) {
  return static_cast<AttributeKind>(value.index());
}

namespace {

std::string FormatFloat(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.9g", value);
  return buffer;
}

std::string FormatInts(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(values[i]);
  }
  return text + "]";
}

}  // namespace

std::string AttributeValueToString(const AttributeValue& value) {
  switch (KindOf(value)) {
    case AttributeKind::kInt:
      return std::to_string(std::get<int64_t>(value));
    case AttributeKind::kFloat:
      return FormatFloat(std::get<double>(value));
    case AttributeKind::kBool:
      return std::get<bool>(value) ? "true" : "false";
    case AttributeKind::kString:
      return "\"" + std::get<std::string>(value) + "\"";
    case AttributeKind::kInts:
      return FormatInts(std::get<std::vector<int64_t>>(value));
  }
  return "";
}

StatusOr<AttributeValue> AttributeValueFromProto(const proto::Attribute& attribute) {
  switch (attribute.value_case()) {
    case proto::Attribute::kInt:
      return AttributeValue(static_cast<int64_t>(attribute.int_()));
    case proto::Attribute::kFloat:
      return AttributeValue(attribute.float_());
    case proto::Attribute::kBool:
      return AttributeValue(attribute.bool_());
    case proto::Attribute::kString:
      return AttributeValue(attribute.string());
    case proto::Attribute::kInts:
      return AttributeValue(
          std::vector<int64_t>(attribute.ints().value().begin(), attribute.ints().value().end()));
    case proto::Attribute::VALUE_NOT_SET:
      break;
  }
  return InvalidArgumentError("attribute '" + attribute.name() + "' has no value");
}

proto::Attribute AttributeToProto(const std::string& name, const AttributeValue& value) {
  proto::Attribute attribute;
  AttributeToProto(name, value, &attribute);
  return attribute;
}

void AttributeToProto(const std::string& name, const AttributeValue& value,
                      proto::Attribute* attribute) {
  attribute->set_name(name);
  switch (KindOf(value)) {
    case AttributeKind::kInt:
      attribute->set_int_(std::get<int64_t>(value));
      break;
    case AttributeKind::kFloat:
      attribute->set_float_(std::get<double>(value));
      break;
    case AttributeKind::kBool:
      attribute->set_bool_(std::get<bool>(value));
      break;
    case AttributeKind::kString:
      attribute->set_string(std::get<std::string>(value));
      break;
    case AttributeKind::kInts: {
      // An empty list still selects the `ints` alternative.
      proto::IntList* ints = attribute->mutable_ints();
      const std::vector<int64_t>& entries = std::get<std::vector<int64_t>>(value);
      ints->mutable_value()->Reserve(static_cast<int>(entries.size()));
      for (int64_t entry : entries) ints->add_value(entry);
      break;
    }
  }
}

void AttributeMap::Set(const std::string& name, AttributeValue value) {
  for (auto& entry : entries_) {
    if (entry.first == name) {
      entry.second = std::move(value);
      return;
    }
  }
  entries_.emplace_back(name, std::move(value));
}

const AttributeValue* AttributeMap::Find(const std::string& name) const {
  for (const auto& entry : entries_) {
    if (entry.first == name) return &entry.second;
  }
  return nullptr;
}

template <typename T>
const T& AttributeMap::Get(const std::string& name, AttributeKind kind) const {
  const AttributeValue* value = Find(name);
  CHECK(value != nullptr) << "attribute '" << name << "' is missing after validation";
  CHECK(KindOf(*value) == kind) << "attribute '" << name << "' is "
                                << AttributeKindName(KindOf(*value)) << ", not "
                                << AttributeKindName(kind);
  return std::get<T>(*value);
}

int64_t AttributeMap::GetInt(const std::string& name) const {
  return Get<int64_t>(name, AttributeKind::kInt);
}
double AttributeMap::GetFloat(const std::string& name) const {
  return Get<double>(name, AttributeKind::kFloat);
}
bool AttributeMap::GetBool(const std::string& name) const {
  return Get<bool>(name, AttributeKind::kBool);
}
const std::string& AttributeMap::GetString(const std::string& name) const {
  return Get<std::string>(name, AttributeKind::kString);
}
const std::vector<int64_t>& AttributeMap::GetInts(const std::string& name) const {
  return Get<std::vector<int64_t>>(name, AttributeKind::kInts);
}

std::string AttributeMap::ToString() const {
  std::string text = "{";
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (i > 0) text += ", ";
    text += entries_[i].first + ": " + AttributeValueToString(entries_[i].second);
  }
  return text + "}";
}

}  // namespace compiler
}  // namespace softwire
