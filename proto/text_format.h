// Protobuf text format for files the runtime writes and reads back (a checkpoint's manifest),
// so that code outside proto/ needs no protobuf header of its own.
//
//   std::string text = ToTextFormat(manifest);
//   Status parsed = ParseTextFormat(text, "checkpoint.pbtxt", &manifest);
#ifndef SOFTWIRE_PROTO_TEXT_FORMAT_H_
#define SOFTWIRE_PROTO_TEXT_FORMAT_H_

#include <google/protobuf/message.h>

#include <string>

#include "base/status.h"

namespace softwire {
namespace proto {

std::string ToTextFormat(const google::protobuf::Message& message);

// InvalidArgument naming `what` and the parser's first complaint (line and column).
Status ParseTextFormat(const std::string& text, const std::string& what,
                       google::protobuf::Message* message);

}  // namespace proto
}  // namespace softwire

#endif  // SOFTWIRE_PROTO_TEXT_FORMAT_H_
