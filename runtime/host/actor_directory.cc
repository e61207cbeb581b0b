#include "runtime/host/actor_directory.h"

#include <caf/send.hpp>

#include "runtime/host/host_messages.h"

namespace softwire {
namespace runtime {

void ActorDirectory::OnLaunchCompleted(int64_t actor, int64_t firing, Status status) {
  LaunchDone done;
  done.firing = firing;
  done.code = static_cast<int32_t>(status.code());
  done.message = status.message();
  caf::anon_send(handles_[actor], std::move(done));
}

}  // namespace runtime
}  // namespace softwire
