// ParseJobFile / ParseJobText (declared in compiler.h): text format -> JobFile, with the line
// of every block so that later semantic errors can point at it.
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <filesystem>
#include <string>

#include "base/file.h"
#include "compiler/compiler.h"

namespace softwire {
namespace compiler {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::TextFormat;

// Collects every syntax error and unknown field as "path:line:column: message" (1-based).
class JobErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  explicit JobErrorCollector(std::string display_name) : display_name_(std::move(display_name)) {}

  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (!errors_.empty()) errors_ += "\n";
    errors_ += display_name_ + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) +
               ": " + message;
  }

  const std::string& errors() const { return errors_; }

 private:
  std::string display_name_;
  std::string errors_;
};

// 1-based line of the index-th value of repeated field `name` of Job; 0 when unknown.
int LineOf(const TextFormat::ParseInfoTree& tree, const char* name, int index) {
  const FieldDescriptor* field = proto::Job::descriptor()->FindFieldByName(name);
  CHECK(field != nullptr) << name;
  return tree.GetLocation(field, field->is_repeated() ? index : -1).line + 1;
}

template <typename Blocks>
void RecordLines(const TextFormat::ParseInfoTree& tree, const char* field, const Blocks& blocks,
                 std::vector<int>* line_at, std::map<std::string, int>* line_by_name) {
  for (int i = 0; i < blocks.size(); ++i) {
    int line = LineOf(tree, field, i);
    line_at->push_back(line);
    line_by_name->emplace(blocks.Get(i).name(), line);  // First occurrence wins.
  }
}

std::string AbsoluteDirectory(const std::string& directory) {
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(directory, error);
  if (error) return directory;
  return absolute.lexically_normal().string();
}

}  // namespace

StatusOr<JobFile> ParseJobText(const std::string& text, const std::string& display_name,
                               const std::string& directory) {
  JobErrorCollector errors(display_name);
  TextFormat::ParseInfoTree tree;
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&tree);

  JobFile job_file;
  if (!parser.ParseFromString(text, &job_file.job)) {
    return InvalidArgumentError(errors.errors().empty() ? display_name + ": cannot parse job"
                                                        : errors.errors());
  }
  job_file.path = display_name;
  job_file.directory = AbsoluteDirectory(directory.empty() ? "." : directory);
  const proto::Job& job = job_file.job;
  RecordLines(tree, "op", job.op(), &job_file.op_line_at, &job_file.op_lines);
  RecordLines(tree, "variable", job.variable(), &job_file.variable_line_at,
              &job_file.variable_lines);
  RecordLines(tree, "source", job.source(), &job_file.source_line_at, &job_file.source_lines);
  for (int i = 0; i < job.metric_size(); ++i) {
    job_file.metric_line_at.push_back(LineOf(tree, "metric", i));
  }
  if (job.has_train()) job_file.train_line = LineOf(tree, "train", -1);
  return job_file;
}

StatusOr<JobFile> ParseJobFile(const std::string& path) {
  SOFTWIRE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseJobText(text, path, DirectoryOf(path));
}

}  // namespace compiler
}  // namespace softwire
