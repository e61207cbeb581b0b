#include "runtime/host/caf_thread_names.h"

#include <string>

#include "base/thread_affinity.h"
#include "base/thread_name.h"

namespace softwire {
namespace runtime {

CafThreadNames::CafThreadNames(std::vector<int> cores, std::vector<std::string> worker_names)
    : cores_(std::move(cores)), worker_names_(std::move(worker_names)) {}

void CafThreadNames::thread_started() {
  const std::string given = CurrentThreadName();
  if (given == "caf.clock") {
    NameCurrentThread("sw:caf/clock");
    return;
  }
  if (given == "caf.actor") {
    NameCurrentThread("sw:caf/detached");
    return;
  }
  const int worker = workers_.fetch_add(1);
  NameCurrentThread(static_cast<size_t>(worker) < worker_names_.size()
                        ? worker_names_[static_cast<size_t>(worker)]
                        : "sw:caf/" + std::to_string(worker));
  if (!cores_.empty()) PinCurrentThread(cores_[static_cast<size_t>(worker) % cores_.size()]);
}

}  // namespace runtime
}  // namespace softwire
