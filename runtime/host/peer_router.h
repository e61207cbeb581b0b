// PeerRouter: the one place where a hosted actor's protocol message to another actor goes.
// An actor of this node gets it in its mailbox; an actor hosted by another node gets it through
// the PeerLink to that node (in one process: that node's router; later: a remote proxy over the
// data plane). A message that arrives from a peer is delivered here only when it belongs to this
// router's job and its run is live; anything else (a late message of an ended run, one of
// another job) is dropped and counted, never delivered to another job's actor.
//
//   PeerRouter router(job, &directory);
//   router.ConnectPeer(partition.actors_of("node1"), &node1_router);   // before the start
//   router.Route(message, context());                                 // from an actor's handler
//
// Threading: Connect* before the actors start; Route from actors' handlers (read-only);
// Receive from any thread (a peer's actors), also while this router Closes.
// Ownership: borrows the directory and the links, which outlive the router's run.
#ifndef SOFTWIRE_RUNTIME_HOST_PEER_ROUTER_H_
#define SOFTWIRE_RUNTIME_HOST_PEER_ROUTER_H_

#include <atomic>
#include <caf/execution_unit.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/message_id.hpp>
#include <cstdint>
#include <vector>

#include "actors/messages.h"
#include "base/mutex.h"
#include "runtime/host/actor_directory.h"

namespace softwire {
namespace runtime {

// Where messages to another node's actors go. Thread-safe; must not block.
class PeerLink {
 public:
  virtual ~PeerLink() = default;
  virtual void Send(const actors::ProtocolMessage& message) = 0;
};

class PeerRouter final : public PeerLink {
 public:
  PeerRouter(actors::JobId job, const ActorDirectory* directory);

  // Messages to `actors` (plan ids, hosted by one other node) go to `link`.
  void ConnectPeer(const std::vector<int64_t>& actors, PeerLink* link);

  // Sends `message` on: to a local actor's mailbox (scheduled on `context`, the sender's worker,
  // where the policy allows), or to the peer that hosts message.to. Hot path: one branch more
  // than a direct enqueue.
  void Route(const actors::ProtocolMessage& message, caf::execution_unit* context) const {
    const caf::actor& handle = directory_->Get(message.to);
    if (handle) {
      // What send() does, minus the sender: nobody answers protocol messages, so the mailbox
      // element need not hold (and count a reference to) the sending actor.
      handle->enqueue(caf::make_mailbox_element(nullptr, caf::make_message_id(), {}, message),
                      context);
      return;
    }
    RouteToPeer(message);
  }

  // PeerLink: a message from a peer's actor to one of ours.
  void Send(const actors::ProtocolMessage& message) override;

  // Opens the router for this run's messages from peers (once the actors are in the directory,
  // before any peer starts), and closes it (before the directory is cleared). Closed, it drops
  // them.
  void Open();
  void Close();

  actors::JobId job() const { return job_; }
  // Messages dropped: from a peer while closed or of another job, or to an actor no one hosts.
  int64_t dropped() const { return dropped_.load(); }

 private:
  void RouteToPeer(const actors::ProtocolMessage& message) const;

  const actors::JobId job_;
  const ActorDirectory* const directory_;
  std::vector<PeerLink*> links_;  // By actor id; null for local actors.
  Mutex mutex_;                   // Orders Send with Open and Close.
  bool open_ GUARDED_BY(mutex_) = false;
  mutable std::atomic<int64_t> dropped_{0};
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_PEER_ROUTER_H_
