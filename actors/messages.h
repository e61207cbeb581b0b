// The protocol's messages, as plain structs. Ready, Release and EndOfStream are what the
// protocol's handlers take; ProtocolMessage is how any of them travels from one actor to another:
// one flat struct, the same in every host (CAF, the simulator, the test host) and fit to go on a
// wire (48 bytes, no pointers, no unused payloads). The runtime registers it with CAF in one
// place (runtime/host/host_messages.h); here it knows nothing of CAF.
#ifndef SOFTWIRE_ACTORS_MESSAGES_H_
#define SOFTWIRE_ACTORS_MESSAGES_H_

#include <cstdint>

#include "actors/actor_description.h"

namespace softwire {
namespace actors {

// Producer -> consumer: fill `sequence` of `register_id` is in `slot`.
struct Ready {
  RegisterId register_id = -1;
  int32_t slot = 0;
  int64_t sequence = 0;
};

// Consumer -> producer: the consumer is done reading fill `sequence` in `slot`.
struct Release {
  RegisterId register_id = -1;
  int32_t slot = 0;
  int64_t sequence = 0;
};

// Producer -> consumer: no fill of `register_id` will follow.
struct EndOfStream {
  RegisterId register_id = -1;
};

// Which job a message belongs to: every message carries it, so one runtime can host several
// jobs at once and drop a late message of one that ended. 0: no job (a host of one job).
using JobId = int64_t;

enum class MessageType : int32_t { kReady = 0, kRelease = 1, kEndOfStream = 2 };

// One protocol message from actor `from` to actor `to` of job `job`: the Ready, Release or
// EndOfStream that `type` names, its fields flat (an EndOfStream uses only register_id).
struct ProtocolMessage {
  using Type = MessageType;

  JobId job = 0;
  ActorId from = -1;
  ActorId to = -1;
  RegisterId register_id = -1;
  int64_t sequence = 0;
  int32_t slot = 0;
  MessageType type = MessageType::kReady;

  Ready ready() const { return Ready{register_id, slot, sequence}; }
  Release release() const { return Release{register_id, slot, sequence}; }
  EndOfStream end_of_stream() const { return EndOfStream{register_id}; }
  // Sets `type` and the fields of `message`.
  void Set(const Ready& message) {
    type = MessageType::kReady;
    register_id = message.register_id;
    slot = message.slot;
    sequence = message.sequence;
  }
  void Set(const Release& message) {
    type = MessageType::kRelease;
    register_id = message.register_id;
    slot = message.slot;
    sequence = message.sequence;
  }
  void Set(const EndOfStream& message) {
    type = MessageType::kEndOfStream;
    register_id = message.register_id;
    slot = 0;
    sequence = 0;
  }
};

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_MESSAGES_H_
