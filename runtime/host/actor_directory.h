// ActorDirectory: the CAF handle of every actor a hosted plan runs in this process, by plan
// actor id (null for actors hosted elsewhere, and between runs), and the LaunchListener that
// turns a deferred launch's completion into a LaunchDone message.
//
// Threading: filled by the execution's thread after spawning and before the first start message
// (sending a message publishes the filled table to the actor that receives it, and every
// actor's first work follows from a start message); read-only while actors run; cleared after
// every actor terminated. OnLaunchCompleted may come from a device thread at any time, also
// after Clear (a sim launch of a failed run): it then drops the completion.
#ifndef SOFTWIRE_RUNTIME_HOST_ACTOR_DIRECTORY_H_
#define SOFTWIRE_RUNTIME_HOST_ACTOR_DIRECTORY_H_

#include <caf/actor.hpp>
#include <cstdint>
#include <vector>

#include "base/mutex.h"
#include "runtime/device/device_queue.h"

namespace softwire {
namespace runtime {

class ActorDirectory final : public LaunchListener {
 public:
  explicit ActorDirectory(int64_t actors)
      : handles_(static_cast<size_t>(actors)), completions_(static_cast<size_t>(actors), 0) {}

  void Set(int64_t actor, caf::actor handle);
  // The handle of `actor`; null when it is not hosted here or not running. Only while the
  // actors run (see Threading).
  const caf::actor& Get(int64_t actor) const { return handles_[static_cast<size_t>(actor)]; }
  int64_t size() const { return static_cast<int64_t>(handles_.size()); }
  // Drops every handle (after the actors terminated). The table keeps its size.
  void Clear();

  void OnLaunchCompleted(int64_t actor, int64_t firing, Status status) override;

  // Before a run: forgets the completions counted so far.
  void ResetCompletions();
  // Blocks until `actor`'s deferred launches have all been reported: `launches` in this run.
  // After a failed run the queues may still hold launches of its exited actors, which read
  // their bindings until reported; this is how the run waits for them.
  void AwaitCompletions(int64_t actor, int64_t launches);

 private:
  // Held by Set, Clear and OnLaunchCompleted, which may race only with Clear.
  Mutex mutex_;
  CondVar completed_;
  std::vector<caf::actor> handles_;
  // Deferred launches reported, by actor.
  std::vector<int64_t> completions_ GUARDED_BY(mutex_);
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_ACTOR_DIRECTORY_H_
