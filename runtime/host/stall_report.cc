#include "runtime/host/stall_report.h"

#include <cctype>

#include "actors/actor_protocol.h"

namespace softwire {
namespace runtime {
namespace {

std::string ActorName(const proto::Plan& plan, int64_t id) {
  if (id < 0 || id >= plan.actor_size()) return "actor #" + std::to_string(id);
  return "actor '" + plan.actor(static_cast<int>(id)).name() + "'";
}

std::string RegisterName(const proto::Plan& plan, int64_t id) {
  if (id < 0 || id >= plan.register__size()) return "register #" + std::to_string(id);
  return "register '" + plan.register_(static_cast<int>(id)).name() + "'";
}

std::string ActorList(const proto::Plan& plan, const std::vector<int64_t>& ids) {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) text += i + 1 == ids.size() ? " and " : ", ";
    text += ActorName(plan, ids[i]);
  }
  return text.empty() ? "nobody" : text;
}

}  // namespace

std::string DescribeWaitReport(const proto::Plan& plan, const WaitReport& report) {
  using Kind = actors::WaitState::Kind;
  std::string kind_name = "?";
  if (report.actor >= 0 && report.actor < plan.actor_size()) {
    kind_name = proto::ActorKind_Name(plan.actor(static_cast<int>(report.actor)).kind());
    const std::string prefix = "ACTOR_KIND_";
    if (kind_name.compare(0, prefix.size(), prefix) == 0)
      kind_name = kind_name.substr(prefix.size());
    for (char& c : kind_name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  std::string text = ActorName(plan, report.actor) + " (" + kind_name + ") at firing " +
                     std::to_string(report.next_firing) + ": ";
  Kind kind = static_cast<Kind>(report.kind);
  text += actors::WaitKindName(kind);
  switch (kind) {
    case Kind::kRunning:
      text += ": its kernel is running or queued on its device";
      break;
    case Kind::kStarved:
      text += ": needs fill " + std::to_string(report.sequence) + " of " +
              RegisterName(plan, report.register_id) + " from " +
              ActorList(plan, report.waiting_on);
      break;
    case Kind::kBlocked:
      text += ": no free slot in " + RegisterName(plan, report.register_id) + "; fill " +
              std::to_string(report.sequence) + " is still held by " +
              ActorList(plan, report.waiting_on);
      break;
    case Kind::kDraining:
      text += ": all firings done";
      if (report.register_id >= 0) {
        text += "; waits on " + RegisterName(plan, report.register_id);
        if (!report.waiting_on.empty()) text += " for " + ActorList(plan, report.waiting_on);
      }
      break;
    case Kind::kFinished:
      break;
  }
  return text;
}

}  // namespace runtime
}  // namespace softwire
