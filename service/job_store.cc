#include "service/job_store.h"

#include <glog/logging.h>

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "base/file.h"

namespace softwire {
namespace service {
namespace {

constexpr char kJobPrefix[] = "job-";

Status WriteMessage(const std::string& path, const google::protobuf::MessageLite& message) {
  std::string bytes;
  if (!message.SerializeToString(&bytes)) return InternalError("cannot serialize " + path);
  return WriteFileAtomically(path, bytes);
}

}  // namespace

int64_t JobNumber(const std::string& job_id) {
  const std::string prefix = kJobPrefix;
  if (job_id.size() <= prefix.size() || job_id.compare(0, prefix.size(), prefix) != 0) return 0;
  int64_t number = 0;
  for (size_t i = prefix.size(); i < job_id.size(); ++i) {
    if (job_id[i] < '0' || job_id[i] > '9' || number > (int64_t{1} << 50)) return 0;
    number = number * 10 + (job_id[i] - '0');
  }
  return number;
}

JobStore::JobStore(std::string state_directory) : state_directory_(std::move(state_directory)) {}

Status JobStore::Prepare() const {
  if (state_directory_.empty()) return InvalidArgumentError("no state directory given");
  const std::string staging = state_directory_ + "/jobs/.staging";
  std::error_code error;
  std::filesystem::remove_all(staging, error);
  Status made = MakeDirectories(staging);
  if (!made.ok()) {
    return InvalidArgumentError("state directory '" + state_directory_ +
                                "' cannot be used: " + made.message());
  }
  return Status::Ok();
}

std::string JobStore::JobDirectory(const std::string& job_id) const {
  return state_directory_ + "/jobs/" + job_id;
}

std::string JobStore::StagingDirectory(const std::string& job_id) const {
  return state_directory_ + "/jobs/.staging/" + job_id;
}

std::string JobStore::RecordPath(const std::string& job_directory) {
  return job_directory + "/record.pb";
}

std::string JobStore::PlanPath(const std::string& job_directory) {
  return job_directory + "/plan.pb";
}

std::string JobStore::EventsPath(const std::string& job_directory) {
  return job_directory + "/events.log";
}

std::string JobStore::DataDirectory(const std::string& job_directory) {
  return job_directory + "/data";
}

std::string JobStore::ResultsDirectory(const std::string& job_directory) {
  return job_directory + "/results";
}

Status JobStore::Commit(const std::string& job_id) const {
  const std::string from = StagingDirectory(job_id);
  const std::string to = JobDirectory(job_id);
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    return InternalError("cannot move job '" + job_id + "' into '" + to + "'");
  }
  return Status::Ok();
}

void JobStore::Remove(const std::string& job_directory) const {
  std::error_code error;
  std::filesystem::remove_all(job_directory, error);
  if (error) LOG(WARNING) << "cannot remove '" << job_directory << "': " << error.message();
}

Status JobStore::WriteRecord(const std::string& job_directory, const proto::JobRecord& record) {
  return WriteMessage(RecordPath(job_directory), record);
}

Status JobStore::WritePlan(const std::string& job_directory, const proto::Plan& plan) {
  return WriteMessage(PlanPath(job_directory), plan);
}

StatusOr<proto::Plan> JobStore::ReadPlan(const std::string& job_directory) {
  SOFTWIRE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(PlanPath(job_directory)));
  proto::Plan plan;
  if (!plan.ParseFromString(bytes)) {
    return DataLossError("'" + PlanPath(job_directory) + "' is not a plan");
  }
  return plan;
}

std::vector<proto::JobRecord> JobStore::ReadRecords() const {
  std::vector<proto::JobRecord> records;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(state_directory_ + "/jobs", error)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || JobNumber(name) == 0) continue;
    StatusOr<std::string> bytes = ReadFile(RecordPath(entry.path().string()));
    proto::JobRecord record;
    if (!bytes.ok() || !record.ParseFromString(*bytes) || record.info().job_id() != name) {
      LOG(WARNING) << "skipping '" << entry.path().string() << "': no readable record";
      continue;
    }
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace service
}  // namespace softwire
