#include "runtime/host/plan_variables.h"

#include "base/file.h"
#include "runtime/host/plan_edits.h"

namespace softwire {
namespace runtime {

StatusOr<std::map<std::string, NpyArray>> ReadHostedVariables(const HostedPlan& hosted) {
  return ReadVariables(hosted.plan(), hosted.register_slots());
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
