#include "runtime/host/plan_variables.h"

#include <deque>
#include <set>
#include <vector>

#include "base/file.h"
#include "runtime/host/plan_edits.h"

namespace softwire {
namespace runtime {

StatusOr<std::map<std::string, NpyArray>> ReadHostedVariables(const HostedPlan& hosted) {
  // Slots in memory the host cannot address (a cuda device's) are read from host copies.
  const proto::Plan& plan = hosted.plan();
  RegisterSlots slots = hosted.register_slots();
  std::deque<std::vector<char>> copies;  // A deque: pointers into it stay valid as it grows.
  std::set<int64_t> copied;
  for (const proto::PlanVariable& variable : plan.variable()) {
    for (const proto::VariablePart& part : variable.part()) {
      const int64_t id = part.register_id();
      if (id < 0 || id >= plan.register_def_size() || !copied.insert(id).second) continue;
      const proto::RegisterDef& def = plan.register_def(static_cast<int>(id));
      if (def.device() < 0 || def.device() >= static_cast<int>(hosted.devices().size())) continue;
      const Device* device = hosted.devices()[static_cast<size_t>(def.device())];
      if (device == nullptr || device->kind() == proto::DEVICE_KIND_CPU) continue;
      for (char*& slot : slots[static_cast<size_t>(id)]) {
        if (slot == nullptr) continue;  // A sim device: no value.
        copies.emplace_back(static_cast<size_t>(def.bytes_per_slot()));
        SOFTWIRE_RETURN_IF_ERROR(
            device->CopyToHost(slot, copies.back().data(), def.bytes_per_slot()));
        slot = copies.back().data();
      }
    }
  }
  return ReadVariables(plan, slots);
}

StatusOr<std::string> VariableFilePath(const std::string& directory, const std::string& name) {
  size_t begin = 0;
  while (begin <= name.size()) {
    size_t end = name.find('/', begin);
    if (end == std::string::npos) end = name.size();
    std::string part = name.substr(begin, end - begin);
    if (part.empty() || part == "." || part == "..") {
      return InvalidArgumentError("variable '" + name + "' cannot be saved under its name");
    }
    begin = end + 1;
  }
  return directory + "/" + name + ".npy";
}

Status SaveVariables(const std::string& directory,
                     const std::map<std::string, NpyArray>& variables) {
  for (const auto& [name, array] : variables) {
    SOFTWIRE_ASSIGN_OR_RETURN(std::string path, VariableFilePath(directory, name));
    SOFTWIRE_RETURN_IF_ERROR(MakeDirectories(DirectoryOf(path)));
    SOFTWIRE_RETURN_IF_ERROR(WriteNpy(path, array.dtype, array.shape, array.data.data()));
  }
  return Status::Ok();
}

}  // namespace runtime
}  // namespace softwire
