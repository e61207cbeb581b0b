#include "runtime/host/wire_transport.h"

#include <cstring>

namespace softwire {
namespace runtime {

void InProcessWireTransport::Write(const WireWrite& write, std::function<void(Status)> done) {
  const size_t id = static_cast<size_t>(write.register_id);
  if (id >= slots_->size() || static_cast<size_t>(write.slot) >= (*slots_)[id].size()) {
    done(UnavailableError("node '" + write.node + "' is not hosted in this process and no data " +
                          "plane connects to it (register " + std::to_string(write.register_id) +
                          ")"));
    return;
  }
  char* slot = (*slots_)[id][static_cast<size_t>(write.slot)];
  if (slot != nullptr && write.bytes > 0) {
    std::memcpy(slot, write.data, static_cast<size_t>(write.bytes));
  }
  done(Status::Ok());
}

}  // namespace runtime
}  // namespace softwire
