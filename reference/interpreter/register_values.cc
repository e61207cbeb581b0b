#include "reference/interpreter/register_values.h"

#include <glog/logging.h>

#include <algorithm>

namespace softwire {
namespace reference {

RegisterValues::RegisterValues(const proto::Plan& plan) : registers_(plan.register_def_size()) {
  for (const proto::RegisterDef& r : plan.register_def()) {
    for (const proto::RegisterConsumer& consumer : r.consumer()) {
      registers_[r.id()].consumers.push_back(Consumer{consumer.actor(), consumer.phase(), 0});
    }
  }
}

const ReferenceTensor& RegisterValues::CompleteValue(int64_t r, int64_t fill) const {
  CHECK(IsComplete(r, fill)) << "register " << r << " fill " << fill << " is not complete";
  auto found = registers_[r].values.find(fill);
  CHECK(found != registers_[r].values.end())
      << "register " << r << " fill " << fill << " was already released by every consumer";
  return found->second;
}

void RegisterValues::Complete(int64_t r, int64_t fill) {
  Fills& fills = registers_[r];
  CHECK_EQ(fills.completed, fill) << "register " << r << ": fills complete in order";
  ++fills.completed;
  Collect(&fills);
}

void RegisterValues::Release(int64_t r, int64_t actor, int64_t fill) {
  Fills& fills = registers_[r];
  for (Consumer& consumer : fills.consumers) {
    if (consumer.actor != actor) continue;
    CHECK_EQ(consumer.released, fill)
        << "register " << r << ": actor " << actor << " releases fills in order";
    ++consumer.released;
  }
  Collect(&fills);
}

bool RegisterValues::ReadersReleased(int64_t r, int64_t fill) const {
  for (const Consumer& consumer : registers_[r].consumers) {
    if (consumer.phase == 0 && consumer.released <= fill) return false;
  }
  return true;
}

bool RegisterValues::WriterReleasedBefore(int64_t r, int64_t fill) const {
  for (const Consumer& consumer : registers_[r].consumers) {
    if (consumer.phase == 1 && consumer.released < fill) return false;
  }
  return true;
}

void RegisterValues::Collect(Fills* fills) {
  int64_t done = fills->completed;  // A fill nobody reads is done once complete.
  for (const Consumer& consumer : fills->consumers) done = std::min(done, consumer.released);
  while (!fills->values.empty() && fills->values.begin()->first < done) {
    fills->values.erase(fills->values.begin());
  }
}

}  // namespace reference
}  // namespace softwire
