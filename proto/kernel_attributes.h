// KernelAttributes: reads a KernelDef's attributes once, when a kernel is created, with the
// rules of docs/OPS.md: an attribute without a default is required, the value's kind must match
// (an int is accepted where a float is expected), and a name the op does not know is an error.
//
//   KernelAttributes attributes(def);
//   bool transpose_a = attributes.Bool("transpose_a", false);
//   double factor = attributes.RequiredFloat("factor");
//   SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
//
// Getters never fail: on a problem they return the default (or zero) and remember the first
// error, which Finish() returns together with any attribute no getter asked for. Errors are
// InvalidArgument and start with the op type, e.g. "matmul: attribute 'transpose_a' must be a
// bool". Not thread-safe; used on one thread during kernel creation.
//
// Shared by the cpu kernels (runtime/) and the reference kernels (reference/), which may not
// include each other, so that both read a plan's attributes by exactly the same rules; their
// tests write attributes with the builders at the end.
#ifndef SOFTWIRE_PROTO_KERNEL_ATTRIBUTES_H_
#define SOFTWIRE_PROTO_KERNEL_ATTRIBUTES_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/plan.pb.h"

namespace softwire {

class KernelAttributes {
 public:
  // `def` must outlive the reader.
  explicit KernelAttributes(const proto::KernelDef& def);

  bool Bool(const std::string& name, bool default_value);
  int64_t Int(const std::string& name, int64_t default_value);
  int64_t RequiredInt(const std::string& name);
  double Float(const std::string& name, double default_value);
  double RequiredFloat(const std::string& name);
  std::vector<int64_t> Ints(const std::string& name, const std::vector<int64_t>& default_value);
  std::vector<int64_t> RequiredInts(const std::string& name);
  std::string RequiredString(const std::string& name);
  std::string String(const std::string& name, const std::string& default_value);

  // OK when every attribute was asked for, had the right kind, and no required one was missing.
  Status Finish() const;

 private:
  // The attribute called `name`, or null when absent. Records the name as known.
  const proto::Attribute* Find(const std::string& name);
  void Fail(const std::string& problem);

  const proto::KernelDef& def_;
  std::set<std::string> known_;
  Status first_error_;
};

// One attribute, as a plan or a test writes it: BoolAttribute("transpose_a", true).
proto::Attribute BoolAttribute(const std::string& name, bool value);
proto::Attribute IntAttribute(const std::string& name, int64_t value);
proto::Attribute FloatAttribute(const std::string& name, double value);
proto::Attribute StringAttribute(const std::string& name, const std::string& value);
// An int list; set also when empty, since [] is a value.
proto::Attribute IntsAttribute(const std::string& name, const std::vector<int64_t>& values);

}  // namespace softwire

#endif  // SOFTWIRE_PROTO_KERNEL_ATTRIBUTES_H_
