#include "actors/testing/timed_completions.h"

#include <algorithm>

namespace softwire {
namespace actors {
namespace testing {

void TimedCompletions::Add(int64_t at_ns, ActorId actor, int64_t firing) {
  pending_.push_back(Pending{at_ns, added_++, actor, firing});
}

Status TimedCompletions::RunToEnd(ProtocolTestHost* host, int64_t* now) {
  while (true) {
    SOFTWIRE_RETURN_IF_ERROR(host->Run());
    if (pending_.empty()) break;
    auto next =
        std::min_element(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) {
          return a.at_ns != b.at_ns ? a.at_ns < b.at_ns : a.order < b.order;
        });
    const Pending completion = *next;
    pending_.erase(next);
    *now = completion.at_ns;
    SOFTWIRE_RETURN_IF_ERROR(host->CompleteFiring(completion.actor, completion.firing));
  }
  if (!host->AllFinished()) return FailedPreconditionError("the actors did not all finish");
  return Status::Ok();
}

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

}  // namespace testing
}  // namespace actors
}  // namespace softwire
