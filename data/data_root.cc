#include "data/data_root.h"

#include <filesystem>

namespace softwire {
namespace data {

bool StaysInDataRoot(const std::string& path) {
  std::filesystem::path given(path);
  if (path.empty() || given.has_root_path()) return false;
  int depth = 0;
  for (const std::filesystem::path& part : given) {
    if (part == "..") {
      if (--depth < 0) return false;
    } else if (part != "." && !part.empty()) {
      ++depth;
    }
  }
  return true;
}

StatusOr<std::string> ResolveDataPath(const DataRoot& root, const std::string& path) {
  if (path.empty()) return InvalidArgumentError("data path is empty");
  if (root.confined && !StaysInDataRoot(path)) {
    return InvalidArgumentError("data path '" + path +
                                "' leaves the data root (absolute, or '..' above it), and this "
                                "node confines plans to their data root '" +
                                root.directory + "'");
  }
  std::filesystem::path given(path);
  if (given.is_absolute()) return given.lexically_normal().string();
  if (root.directory.empty()) {
    return FailedPreconditionError("data path '" + path +
                                   "' is relative and no data root was given to resolve it "
                                   "against (the directory holding the job's data)");
  }
  return (std::filesystem::path(root.directory) / given).lexically_normal().string();
}

}  // namespace data
}  // namespace softwire
