#include "base/file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace softwire {

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) return NotFoundError("cannot open '" + path + "': " + std::strerror(errno));
  std::ostringstream contents;
  contents << stream.rdbuf();
  if (stream.bad()) return DataLossError("error while reading '" + path + "'");
  return contents.str();
}

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream stream(temporary, std::ios::binary | std::ios::trunc);
    if (!stream) {
      return UnavailableError("cannot create '" + temporary + "': " + std::strerror(errno));
    }
    stream.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    stream.flush();
    if (!stream) {
      std::remove(temporary.c_str());
      return UnavailableError("cannot write '" + temporary + "': " + std::strerror(errno));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    int error = errno;
    std::remove(temporary.c_str());
    return UnavailableError("cannot rename '" + temporary + "' to '" + path +
                            "': " + std::strerror(error));
  }
  return Status::Ok();
}

Status MakeDirectories(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) return UnavailableError("cannot create directory '" + path + "': " + error.message());
  return Status::Ok();
}

std::string DirectoryOf(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

std::string ResolvePath(const std::string& directory, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return (std::filesystem::path(directory) / path).lexically_normal().string();
}

}  // namespace softwire
