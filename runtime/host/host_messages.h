// Every message the CAF host sends, registered with CAF in this one place.
//
// The protocol's messages travel as actors::ProtocolMessage (actors/messages.h): one flat
// struct for Ready, Release and EndOfStream, with the job, the sender and the receiver, so the
// receiver can tell the protocol who spoke without a lookup and drop a message of another job.
// One CAF message type for all three (rather than (ActorId, Ready), (ActorId, Release), ...) is
// measured: CAF 0.17 matches handlers in order and compares custom types by name (strcmp) on a
// mismatch, and one single-element type cut ~280 instructions per firing (~5%) off
// bench/actor_overhead.
// The host adds its own: a start signal, the completion of a deferred kernel launch, and the
// wait-state query of the stall watchdog and of live diagnosis.
//
// Every type gets a type ID and an inspect() (the 0.17 form; CAF 1.0 changes only the body of
// inspect), so the same messages can cross nodes once the data plane exists.
#ifndef SOFTWIRE_RUNTIME_HOST_HOST_MESSAGES_H_
#define SOFTWIRE_RUNTIME_HOST_HOST_MESSAGES_H_

#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/type_id.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "actors/messages.h"
#include "base/status.h"

namespace softwire {
namespace runtime {

// A deferred kernel launch of firing `firing` completed with status (code, message).
struct LaunchDone {
  int64_t firing = 0;
  int32_t code = 0;  // StatusCode.
  std::string message;
};

// One actor's answer to the wait-state query: actors::WaitState, flattened.
struct WaitReport {
  int64_t actor = -1;
  int32_t kind = 0;  // actors::WaitState::Kind.
  int64_t next_firing = 0;
  int64_t register_id = -1;
  int64_t sequence = -1;
  std::vector<int64_t> waiting_on;
  int64_t completed_firings = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, LaunchDone& x) {
  return f(caf::meta::type_name("softwire.LaunchDone"), x.firing, x.code, x.message);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, WaitReport& x) {
  return f(caf::meta::type_name("softwire.WaitReport"), x.actor, x.kind, x.next_firing,
           x.register_id, x.sequence, x.waiting_on, x.completed_firings);
}

}  // namespace runtime

namespace actors {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ProtocolMessage& x) {
  return f(caf::meta::type_name("softwire.ProtocolMessage"), x.job, x.from, x.to, x.register_id,
           x.sequence, x.slot, x.type);
}

}  // namespace actors
}  // namespace softwire

CAF_BEGIN_TYPE_ID_BLOCK(softwire_runtime, caf::first_custom_type_id)
CAF_ADD_TYPE_ID(softwire_runtime, (softwire::actors::ProtocolMessage))
CAF_ADD_TYPE_ID(softwire_runtime, (softwire::runtime::LaunchDone))
CAF_ADD_TYPE_ID(softwire_runtime, (softwire::runtime::WaitReport))
// Start: begin the protocol (sent once every actor of the job exists).
CAF_ADD_ATOM(softwire_runtime, softwire::runtime, start_atom, "sw_start")
// Describe wait: answer with a WaitReport to the actor given in the message.
CAF_ADD_ATOM(softwire_runtime, softwire::runtime, describe_wait_atom, "sw_wait")
// Wake: nothing to do. The sim devices' timer sends it shortly before a completion so that a
// scheduler worker is awake (spinning) when the completion comes (sim_clock.h).
CAF_ADD_ATOM(softwire_runtime, softwire::runtime, wake_atom, "sw_wake")
CAF_END_TYPE_ID_BLOCK(softwire_runtime)

#endif  // SOFTWIRE_RUNTIME_HOST_HOST_MESSAGES_H_
