// Fuzz target: protocol messages from a peer node, as the data plane hands them over (a
// kMessage frame's payload is the 48 bytes of an actors::ProtocolMessage, runtime/net/frame.h),
// delivered to the actors of a small two-node plan with a send/recv edge
// (plan/testing/two_node_plan.h) through their protocol core, beside the plan's own traffic.
// A broken or hostile peer can send any bytes: every message must be handled or give a Status
// (the host then fails that actor, as HostActor does), never crash, overflow or hang.
//
// Input: a sequence of records, each an op byte then, for an injected message, its 48 bytes:
//   op % 4 == 0  deliver the next message the actors sent each other (honest traffic);
//   op % 4 == 1  complete the firing actor (next byte % actors) has in flight, if any;
//   else         inject the next 48 bytes as a message from a peer: dropped when `to` is not an
//                actor of the plan (PeerRouter::Send), else handled by that actor like any
//                message (a type out of range reads as EndOfStream, as HostActor's switch does).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "actors/actor_description.h"
#include "actors/actor_protocol.h"
#include "fuzz/fuzz_target.h"
#include "plan/testing/kind_settings.h"
#include "plan/testing/two_node_plan.h"

namespace softwire {
namespace {

struct Host {
  std::vector<actors::ActorDescription> descriptions;
  std::vector<std::unique_ptr<actors::ActorProtocol>> actors;
  std::vector<bool> stopped;
  std::vector<std::optional<int64_t>> in_flight;  // The firing each actor launched.
  std::deque<actors::ProtocolMessage> mail;       // Honest traffic, in send order.

  // Acts on one protocol call's outcome as a host does: a failure stops the actor; messages go
  // to the mail; a launch is kept until the fuzzer completes it.
  void Drive(size_t actor, const Status& status, actors::Outbox* outbox) {
    if (!status.ok()) {
      stopped[actor] = true;
      return;
    }
    for (actors::ProtocolMessage message : outbox->messages) {
      message.from = static_cast<actors::ActorId>(actor);
      mail.push_back(message);
    }
    if (outbox->launch) in_flight[actor] = outbox->launch->index;
    if (outbox->finished) stopped[actor] = true;
    outbox->clear();
  }

  void Deliver(const actors::ProtocolMessage& message, actors::Outbox* outbox) {
    if (message.to < 0 || message.to >= static_cast<int64_t>(actors.size())) return;  // Dropped.
    const size_t actor = static_cast<size_t>(message.to);
    if (stopped[actor]) return;
    actors::ActorProtocol& protocol = *actors[actor];
    Status status;
    switch (message.type) {
      case actors::MessageType::kReady:
        status = protocol.OnReady(message.from, message.ready(), outbox);
        break;
      case actors::MessageType::kRelease:
        status = protocol.OnRelease(message.from, message.release(), outbox);
        break;
      default:
        status = protocol.OnEndOfStream(message.from, message.end_of_stream(), outbox);
        break;
    }
    Drive(actor, status, outbox);
  }
};

const std::vector<actors::ActorDescription>& Descriptions() {
  static const auto* descriptions = [] {
    proto::Plan plan = plan::testing::TwoNodePlan();
    for (proto::ActorDef& actor : *plan.mutable_actor()) {  // What plan/'s tests leave out.
      plan::testing::KindNames names;
      names.dataset = "data";
      names.outputs = {"x"};
      names.sink_output = "z";
      plan::testing::SetKindSettings(names, plan.schedule().pieces_per_step(), &actor);
      if (actor.kernel().op_type().empty()) actor.mutable_kernel()->set_op_type("relu");
    }
    StatusOr<std::vector<actors::ActorDescription>> described = actors::DescribeActors(plan);
    if (!described.ok()) {  // The fixed plan is valid.
      std::fprintf(stderr, "%s\n", described.status().ToString().c_str());
      std::abort();
    }
    return new std::vector<actors::ActorDescription>(std::move(*described));
  }();
  return *descriptions;
}

}  // namespace
}  // namespace softwire

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using softwire::actors::ProtocolMessage;
  softwire::Host host;
  host.descriptions = softwire::Descriptions();
  const size_t count = host.descriptions.size();
  for (const softwire::actors::ActorDescription& description : host.descriptions) {
    host.actors.push_back(std::make_unique<softwire::actors::ActorProtocol>(&description));
  }
  host.stopped.assign(count, false);
  host.in_flight.assign(count, std::nullopt);
  softwire::actors::Outbox outbox;
  for (size_t actor = 0; actor < count; ++actor) {
    host.actors[actor]->Start(&outbox);
    host.Drive(actor, softwire::Status::Ok(), &outbox);
  }
  size_t at = 0;
  while (at < size) {
    const uint8_t op = data[at++];
    if (op % 4 == 0) {
      if (host.mail.empty()) continue;
      const ProtocolMessage message = host.mail.front();
      host.mail.pop_front();
      host.Deliver(message, &outbox);
    } else if (op % 4 == 1) {
      if (at >= size) break;
      const size_t actor = data[at++] % count;
      if (host.stopped[actor] || !host.in_flight[actor]) continue;
      const int64_t firing = *host.in_flight[actor];
      host.in_flight[actor].reset();
      host.Drive(actor, host.actors[actor]->OnFiringDone(firing, &outbox), &outbox);
    } else {
      if (size - at < sizeof(ProtocolMessage)) break;
      ProtocolMessage message;
      std::memcpy(&message, data + at, sizeof(message));  // What the data plane does.
      at += sizeof(message);
      host.Deliver(message, &outbox);
    }
  }
  return 0;
}
