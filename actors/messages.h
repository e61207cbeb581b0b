// The three protocol messages, as plain structs. The runtime registers them with CAF in one
// place (runtime/); here they know nothing of CAF.
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

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_MESSAGES_H_
