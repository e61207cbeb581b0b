#include "proto/text_format.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

namespace softwire {
namespace proto {
namespace {

// Keeps the parser's first error.
class FirstError final : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (error_.empty()) {
      error_ = "line " + std::to_string(line + 1) + " column " + std::to_string(column + 1) + ": " +
               message;
    }
  }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

}  // namespace

std::string ToTextFormat(const google::protobuf::Message& message) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(message, &text);
  return text;
}

Status ParseTextFormat(const std::string& text, const std::string& what,
                       google::protobuf::Message* message) {
  FirstError errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, message)) {
    return InvalidArgumentError(what + ": " +
                                (errors.error().empty() ? "does not parse" : errors.error()));
  }
  return Status::Ok();
}

}  // namespace proto
}  // namespace softwire
