#include "proto/kernel_attributes.h"

namespace softwire {

KernelAttributes::KernelAttributes(const proto::KernelDef& def) : def_(def) {
  std::set<std::string> seen;
  for (const proto::Attribute& attribute : def_.attr()) {
    if (!seen.insert(attribute.name()).second) {
      Fail("attribute '" + attribute.name() + "' is given twice");
    }
  }
}

const proto::Attribute* KernelAttributes::Find(const std::string& name) {
  known_.insert(name);
  for (const proto::Attribute& attribute : def_.attr()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

void KernelAttributes::Fail(const std::string& problem) {
  if (first_error_.ok()) first_error_ = InvalidArgumentError(def_.op_type() + ": " + problem);
}

bool KernelAttributes::Bool(const std::string& name, bool default_value) {
  const proto::Attribute* attribute = Find(name);
  if (attribute == nullptr) return default_value;
  if (attribute->value_case() != proto::Attribute::kBool) {
    Fail("attribute '" + name + "' must be a bool");
    return default_value;
  }
  return attribute->bool_();
}

int64_t KernelAttributes::Int(const std::string& name, int64_t default_value) {
  const proto::Attribute* attribute = Find(name);
  if (attribute == nullptr) return default_value;
  if (attribute->value_case() != proto::Attribute::kInt) {
    Fail("attribute '" + name + "' must be an int");
    return default_value;
  }
  return attribute->int_();
}

int64_t KernelAttributes::RequiredInt(const std::string& name) {
  if (Find(name) == nullptr) {
    Fail("required attribute '" + name + "' (int) is missing");
    return 0;
  }
  return Int(name, 0);
}

double KernelAttributes::Float(const std::string& name, double default_value) {
  const proto::Attribute* attribute = Find(name);
  if (attribute == nullptr) return default_value;
  // Text files write `float: 1` and `int: 1` alike for whole numbers; both mean the number.
  if (attribute->value_case() == proto::Attribute::kInt) {
    return static_cast<double>(attribute->int_());
  }
  if (attribute->value_case() != proto::Attribute::kFloat) {
    Fail("attribute '" + name + "' must be a float");
    return default_value;
  }
  return attribute->float_();
}

double KernelAttributes::RequiredFloat(const std::string& name) {
  if (Find(name) == nullptr) {
    Fail("required attribute '" + name + "' (float) is missing");
    return 0;
  }
  return Float(name, 0);
}

std::string KernelAttributes::String(const std::string& name, const std::string& default_value) {
  const proto::Attribute* attribute = Find(name);
  if (attribute == nullptr) return default_value;
  if (attribute->value_case() != proto::Attribute::kString) {
    Fail("attribute '" + name + "' must be a string");
    return default_value;
  }
  return attribute->string();
}

std::string KernelAttributes::RequiredString(const std::string& name) {
  const proto::Attribute* attribute = Find(name);
  if (attribute == nullptr) {
    Fail("required attribute '" + name + "' (string) is missing");
    return "";
  }
  if (attribute->value_case() != proto::Attribute::kString) {
    Fail("attribute '" + name + "' must be a string");
    return "";
  }
  return attribute->string();
}

std::vector<int64_t> KernelAttributes::Ints(const std::string& name,
                                            const std::vector<int64_t>& default_value) {
  const proto::Attribute* attribute = Find(name);
  if (attribute == nullptr) return default_value;
  if (attribute->value_case() != proto::Attribute::kInts) {
    Fail("attribute '" + name + "' must be a list of ints");
    return default_value;
  }
  return std::vector<int64_t>(attribute->ints().value().begin(), attribute->ints().value().end());
}

std::vector<int64_t> KernelAttributes::RequiredInts(const std::string& name) {
  if (Find(name) == nullptr) {
    Fail("required attribute '" + name + "' (ints) is missing");
    return {};
  }
  return Ints(name, {});
}

Status KernelAttributes::Finish() const {
  if (!first_error_.ok()) return first_error_;
  for (const proto::Attribute& attribute : def_.attr()) {
    if (known_.count(attribute.name()) == 0) {
      return InvalidArgumentError(def_.op_type() + ": unknown attribute '" + attribute.name() +
                                  "'");
    }
  }
  return Status::Ok();
}

proto::Attribute BoolAttribute(const std::string& name, bool value) {
  proto::Attribute attribute;
  attribute.set_name(name);
  attribute.set_bool_(value);
  return attribute;
}

proto::Attribute IntAttribute(const std::string& name, int64_t value) {
  proto::Attribute attribute;
  attribute.set_name(name);
  attribute.set_int_(value);
  return attribute;
}

proto::Attribute FloatAttribute(const std::string& name, double value) {
  proto::Attribute attribute;
  attribute.set_name(name);
  attribute.set_float_(value);
  return attribute;
}

proto::Attribute StringAttribute(const std::string& name, const std::string& value) {
  proto::Attribute attribute;
  attribute.set_name(name);
  attribute.set_string(value);
  return attribute;
}

proto::Attribute IntsAttribute(const std::string& name, const std::vector<int64_t>& values) {
  proto::Attribute attribute;
  attribute.set_name(name);
  proto::IntList* list = attribute.mutable_ints();  // Set even when empty: [] is a value.
  for (int64_t value : values) list->add_value(value);
  return attribute;
}

}  // namespace softwire
