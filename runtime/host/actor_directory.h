// ActorDirectory: the CAF handle of every hosted actor, by plan actor id, and the
// LaunchListener that turns a deferred launch's completion into a LaunchDone message.
//
// Threading: filled by the job's thread after spawning and before the first start message
// (sending a message publishes the filled table to the actor that receives it, and every
// actor's first work follows from a start message); read-only while actors run; cleared only
// after every actor terminated.
#ifndef SOFTWIRE_RUNTIME_HOST_ACTOR_DIRECTORY_H_
#define SOFTWIRE_RUNTIME_HOST_ACTOR_DIRECTORY_H_

#include <caf/actor.hpp>
#include <cstdint>
#include <vector>

#include "runtime/device/device_queue.h"

namespace softwire {
namespace runtime {

class ActorDirectory final : public LaunchListener {
 public:
  explicit ActorDirectory(int64_t actors) : handles_(actors) {}

  void Set(int64_t actor, caf::actor handle) { handles_[actor] = std::move(handle); }
  const caf::actor& Get(int64_t actor) const { return handles_[actor]; }
  int64_t size() const { return static_cast<int64_t>(handles_.size()); }
  // Drops every handle (after the actors terminated).
  void Clear() { handles_.clear(); }

  void OnLaunchCompleted(int64_t actor, int64_t firing, Status status) override;

 private:
  std::vector<caf::actor> handles_;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_ACTOR_DIRECTORY_H_
