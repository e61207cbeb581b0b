#include "runtime/host/actor_directory.h"

#include <caf/send.hpp>

#include "runtime/host/host_messages.h"

namespace softwire {
namespace runtime {

void ActorDirectory::Set(int64_t actor, caf::actor handle) {
  MutexLock lock(&mutex_);
  handles_[static_cast<size_t>(actor)] = std::move(handle);
}

void ActorDirectory::Clear() {
  MutexLock lock(&mutex_);
  for (caf::actor& handle : handles_) handle = caf::actor();
}

void ActorDirectory::OnLaunchCompleted(int64_t actor, int64_t firing, Status status) {
  caf::actor handle;
  {
    MutexLock lock(&mutex_);
    handle = handles_[static_cast<size_t>(actor)];
    ++completions_[static_cast<size_t>(actor)];
    completed_.NotifyAll();
  }
  if (!handle) return;  // The run ended (failed): nobody waits for this completion.
  LaunchDone done;
  done.firing = firing;
  done.code = static_cast<int32_t>(status.code());
  done.message = status.message();
  caf::anon_send(handle, std::move(done));
}

void ActorDirectory::ResetCompletions() {
  MutexLock lock(&mutex_);
  for (int64_t& count : completions_) count = 0;
}

void ActorDirectory::AwaitCompletions(int64_t actor, int64_t launches) {
  MutexLock lock(&mutex_);
  while (completions_[static_cast<size_t>(actor)] < launches) completed_.Wait(&lock);
}

}  // namespace runtime
}  // namespace softwire
