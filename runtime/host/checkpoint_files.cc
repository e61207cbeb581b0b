#include "runtime/host/checkpoint_files.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <vector>

#include "base/file.h"
#include "base/npy.h"
#include "proto/checkpoint.pb.h"
#include "proto/text_format.h"
#include "runtime/host/plan_variables.h"

namespace softwire {
namespace runtime {
namespace {

namespace fs = std::filesystem;

constexpr int kFormat = 1;
constexpr char kStepPrefix[] = "step-";
constexpr char kPartialPrefix[] = ".partial-";
constexpr char kManifest[] = "checkpoint.pbtxt";

// Flushes a file or folder to the disk.
Status Sync(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return UnavailableError("cannot open '" + path + "' to sync it");
  const int synced = ::fsync(fd);
  ::close(fd);
  if (synced != 0) return UnavailableError("cannot sync '" + path + "'");
  return Status::Ok();
}

// Writes each array as FOLDER/<name>.npy and syncs it. Returns the names.
StatusOr<std::vector<std::string>> WriteArrays(const std::string& folder,
                                               const std::map<std::string, NpyArray>& arrays) {
  std::vector<std::string> names;
  SOFTWIRE_RETURN_IF_ERROR(MakeDirectories(folder));
  for (const auto& [name, array] : arrays) {
    SOFTWIRE_ASSIGN_OR_RETURN(std::string path, VariableFilePath(folder, name));
    SOFTWIRE_RETURN_IF_ERROR(MakeDirectories(DirectoryOf(path)));
    SOFTWIRE_RETURN_IF_ERROR(WriteNpy(path, array.dtype, array.shape, array.data.data()));
    SOFTWIRE_RETURN_IF_ERROR(Sync(path));
    names.push_back(name);
  }
  return names;
}

template <typename Names>
StatusOr<std::map<std::string, NpyArray>> ReadArrays(const std::string& folder,
                                                     const Names& names) {
  std::map<std::string, NpyArray> arrays;
  for (const std::string& name : names) {
    SOFTWIRE_ASSIGN_OR_RETURN(std::string path, VariableFilePath(folder, name));
    SOFTWIRE_ASSIGN_OR_RETURN(arrays[name], ReadNpy(path));
  }
  return arrays;
}

StatusOr<TrainingState> ReadFolder(const std::string& folder) {
  SOFTWIRE_ASSIGN_OR_RETURN(std::string text, ReadFile(folder + "/" + kManifest));
  proto::CheckpointManifest manifest;
  SOFTWIRE_RETURN_IF_ERROR(proto::ParseTextFormat(text, kManifest, &manifest));
  if (manifest.format() != kFormat) {
    return InvalidArgumentError(std::string(kManifest) + " is of format " +
                                std::to_string(manifest.format()) + ", not " +
                                std::to_string(kFormat));
  }
  TrainingState state;
  state.step = manifest.step();
  SOFTWIRE_ASSIGN_OR_RETURN(state.variables,
                            ReadArrays(folder + "/variables", manifest.variable()));
  SOFTWIRE_ASSIGN_OR_RETURN(state.optimizer_state,
                            ReadArrays(folder + "/optimizer", manifest.optimizer_state()));
  return state;
}

// The steps of the whole checkpoints in `directory`, highest first.
std::vector<int64_t> SavedSteps(const std::string& directory) {
  std::vector<int64_t> steps;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kStepPrefix, 0) != 0) continue;
    const std::string digits = name.substr(sizeof(kStepPrefix) - 1);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    steps.push_back(std::stoll(digits));
  }
  std::sort(steps.rbegin(), steps.rend());
  return steps;
}

}  // namespace

std::string CheckpointFolder(const std::string& directory, int64_t step) {
  char name[32];
  std::snprintf(name, sizeof(name), "%s%08lld", kStepPrefix, static_cast<long long>(step));
  return directory + "/" + name;
}

Status SaveCheckpoint(const std::string& directory, const std::string& job,
                      const TrainingState& state, int keep) {
  if (keep < 1) return InvalidArgumentError("checkpoints to keep must be at least 1");
  const std::string final_folder = CheckpointFolder(directory, state.step);
  const std::string partial = directory + "/" + kPartialPrefix +
                              fs::path(final_folder).filename().string() + "-" +
                              std::to_string(::getpid());
  std::error_code error;
  fs::remove_all(partial, error);
  SOFTWIRE_ASSIGN_OR_RETURN(std::vector<std::string> variables,
                            WriteArrays(partial + "/variables", state.variables));
  SOFTWIRE_ASSIGN_OR_RETURN(std::vector<std::string> optimizer,
                            WriteArrays(partial + "/optimizer", state.optimizer_state));
  proto::CheckpointManifest manifest;
  manifest.set_format(kFormat);
  manifest.set_step(state.step);
  manifest.set_job(job);
  for (const std::string& name : variables) manifest.add_variable(name);
  for (const std::string& name : optimizer) manifest.add_optimizer_state(name);
  SOFTWIRE_RETURN_IF_ERROR(
      WriteFileAtomically(partial + "/" + kManifest, proto::ToTextFormat(manifest)));
  SOFTWIRE_RETURN_IF_ERROR(Sync(partial + "/" + kManifest));
  for (const char* sub : {"/variables", "/optimizer", ""}) {
    SOFTWIRE_RETURN_IF_ERROR(Sync(partial + sub));
  }
  fs::remove_all(final_folder, error);  // A checkpoint of this step from an earlier run.
  fs::rename(partial, final_folder, error);
  if (error) {
    return UnavailableError("cannot rename '" + partial + "' to '" + final_folder +
                            "': " + error.message());
  }
  SOFTWIRE_RETURN_IF_ERROR(Sync(directory));
  // Older checkpoints beyond `keep`, and hidden folders that a killed writer left.
  std::vector<int64_t> steps = SavedSteps(directory);
  for (size_t i = static_cast<size_t>(keep); i < steps.size(); ++i) {
    fs::remove_all(CheckpointFolder(directory, steps[i]), error);
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, error)) {
    if (entry.path().filename().string().rfind(kPartialPrefix, 0) == 0) {
      fs::remove_all(entry.path(), error);
    }
  }
  return Status::Ok();
}

StatusOr<TrainingState> LoadLatestCheckpoint(const std::string& directory,
                                             std::vector<std::string>* skipped) {
  for (int64_t step : SavedSteps(directory)) {
    const std::string folder = CheckpointFolder(directory, step);
    StatusOr<TrainingState> state = ReadFolder(folder);
    if (state.ok() && state->step == step) return state;
    const std::string why =
        "skipping checkpoint '" + folder + "': " +
        (state.ok() ? std::string("its step does not match its folder") : state.status().message());
    LOG(WARNING) << why;
    if (skipped != nullptr) skipped->push_back(why);
  }
  return NotFoundError("checkpoint directory '" + directory + "' holds no whole checkpoint");
}

}  // namespace runtime
}  // namespace softwire
