#include "service/job_data.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <system_error>

#include "base/file.h"
#include "base/format_bytes.h"
#include "data/data_root.h"

namespace softwire {
namespace service {
namespace {

namespace fs = std::filesystem;

// "a/./b" -> "a/b"; empty for a path that is absolute, empty, or has a '..' part anywhere.
std::string NormalUploadPath(const std::string& path) {
  if (path.empty() || path.front() == '/') return "";
  for (const fs::path& part : fs::path(path)) {
    if (part == "..") return "";
  }
  std::string normal = fs::path(path).lexically_normal().generic_string();
  if (normal.empty() || normal == "." || normal.back() == '/') return "";
  return normal;
}

Status CheckUploads(const proto::JobSubmission& submission, int64_t max_upload_bytes,
                    std::map<std::string, const std::string*>* uploads) {
  int64_t bytes = 0;
  for (const proto::DataFile& file : submission.data_file()) {
    bytes += static_cast<int64_t>(file.content().size());
    const std::string path = NormalUploadPath(file.path());
    if (path.empty()) {
      return InvalidArgumentError("data file '" + file.path() +
                                  "': a sent file's path must be relative, without '..'");
    }
    if (!uploads->emplace(path, &file.content()).second) {
      return InvalidArgumentError("data file '" + file.path() + "' is sent twice");
    }
  }
  if (bytes > max_upload_bytes) {
    return ResourceExhaustedError("the data files sent with the job take " + FormatBytes(bytes) +
                                  ", over the server's limit of " + FormatBytes(max_upload_bytes));
  }
  return Status::Ok();
}

// The real path of `path` under `data_root`, refused unless it lies inside the root's.
StatusOr<std::string> DataRootFile(const NamedDataPath& named, const std::string& normal,
                                   const std::string& data_root) {
  const std::string prefix = named.user + ": data path '" + named.path + "'";
  if (data_root.empty()) {
    return InvalidArgumentError(prefix +
                                " was not sent with the job, and the server has no data root "
                                "(softwire serve --data-root DIR) to find it in");
  }
  std::error_code error;
  const fs::path root = fs::canonical(data_root, error);
  if (error) return InvalidArgumentError(prefix + ": the server's data root cannot be read");
  const fs::path file = fs::canonical(root / normal, error);
  if (error) {
    return InvalidArgumentError(prefix +
                                " was not sent with the job and is not under the "
                                "server's data root");
  }
  const std::string root_text = root.string();
  const std::string file_text = file.string();
  const bool inside = file_text.size() > root_text.size() &&
                      file_text.compare(0, root_text.size(), root_text) == 0 &&
                      (root_text.back() == '/' || file_text[root_text.size()] == '/');
  if (!inside) {
    return InvalidArgumentError(prefix + " leads out of the server's data root (a symbolic link)");
  }
  if (!fs::is_regular_file(file, error)) {
    return InvalidArgumentError(prefix + " under the server's data root is not a file");
  }
  return file_text;
}

}  // namespace

std::vector<NamedDataPath> DataPathsOf(const proto::Job& job) {
  std::vector<NamedDataPath> paths;
  for (const proto::DataSource& source : job.source()) {
    const std::string user = "source '" + source.name() + "'";
    if (source.has_npy()) {
      for (const std::string& path : source.npy().path()) paths.push_back({path, user});
    }
    if (source.has_text()) paths.push_back({source.text().path(), user});
  }
  for (const proto::Variable& variable : job.variable()) {
    if (variable.initializer().kind_case() == proto::Initializer::kNpyPath) {
      paths.push_back({variable.initializer().npy_path(), "variable '" + variable.name() + "'"});
    }
  }
  return paths;
}

StatusOr<JobData> CheckJobData(const proto::JobSubmission& submission, const proto::Job& job,
                               const std::string& data_root, int64_t max_upload_bytes) {
  std::map<std::string, const std::string*> uploads;
  SOFTWIRE_RETURN_IF_ERROR(CheckUploads(submission, max_upload_bytes, &uploads));
  std::map<std::string, std::string> links;  // Normal path -> real path under the data root.
  for (const NamedDataPath& named : DataPathsOf(job)) {
    const std::string prefix = named.user + ": data path '" + named.path + "'";
    if (!named.path.empty() && named.path.front() == '/') {
      return InvalidArgumentError(prefix +
                                  " is absolute; a submitted job names its data relative to the "
                                  "server's data root, or sends it with the job");
    }
    if (named.path.empty() || !data::StaysInDataRoot(named.path)) {
      return InvalidArgumentError(prefix + " climbs out of the data root with '..'");
    }
    // "a/../b" stays inside; it names "b".
    const std::string normal = fs::path(named.path).lexically_normal().generic_string();
    if (uploads.count(normal) > 0 || links.count(normal) > 0) continue;
    SOFTWIRE_ASSIGN_OR_RETURN(links[normal], DataRootFile(named, normal, data_root));
  }
  JobData data;
  for (const auto& [path, bytes] : uploads) data.files.push_back({path, bytes, ""});
  for (const auto& [path, target] : links) data.files.push_back({path, nullptr, target});
  return data;
}

Status WriteJobData(const JobData& data, const std::string& directory) {
  SOFTWIRE_RETURN_IF_ERROR(MakeDirectories(directory));
  for (const JobDataFile& file : data.files) {
    const std::string path = directory + "/" + file.path;
    SOFTWIRE_RETURN_IF_ERROR(MakeDirectories(DirectoryOf(path)));
    if (file.upload != nullptr) {
      SOFTWIRE_RETURN_IF_ERROR(WriteFileAtomically(path, *file.upload));
    } else if (::symlink(file.link_target.c_str(), path.c_str()) != 0) {
      return InternalError("cannot link '" + path + "' to the data root's '" + file.link_target +
                           "'");
    }
  }
  return Status::Ok();
}

}  // namespace service
}  // namespace softwire
