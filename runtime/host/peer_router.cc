#include "runtime/host/peer_router.h"

#include <caf/actor.hpp>
#include <caf/all.hpp>

#include "base/mutex.h"
#include "runtime/host/host_messages.h"

namespace softwire {
namespace runtime {

PeerRouter::PeerRouter(actors::JobId job, const ActorDirectory* directory)
    : job_(job), directory_(directory), links_(static_cast<size_t>(directory->size()), nullptr) {}

void PeerRouter::ConnectPeer(const std::vector<int64_t>& actors, PeerLink* link) {
  for (int64_t actor : actors) links_[static_cast<size_t>(actor)] = link;
}

void PeerRouter::RouteToPeer(const actors::ProtocolMessage& message) const {
  PeerLink* link = links_[static_cast<size_t>(message.to)];
  if (link == nullptr) {
    dropped_.fetch_add(1);  // Its actor is hosted nowhere (it already terminated here).
    return;
  }
  link->Send(message);
}

void PeerRouter::Send(const actors::ProtocolMessage& message) {
  MutexLock lock(&mutex_);
  if (!open_ || message.job != job_ || message.to < 0 || message.to >= directory_->size()) {
    dropped_.fetch_add(1);
    return;
  }
  const caf::actor& handle = directory_->Get(message.to);
  if (!handle) {
    dropped_.fetch_add(1);
    return;
  }
  handle->enqueue(caf::make_mailbox_element(nullptr, caf::make_message_id(), {}, message), nullptr);
}

void PeerRouter::Open() {
  MutexLock lock(&mutex_);
  open_ = true;
}

void PeerRouter::Close() {
  MutexLock lock(&mutex_);
  open_ = false;
}

}  // namespace runtime
}  // namespace softwire
