// CafThreadNames: names the threads a CAF actor system starts, and pins its scheduler workers
// when asked, through CAF's thread hook (called on each thread as it starts).
//
//   sw:caf/0, sw:caf/1, ...  scheduler workers, in the order they start (they route messages and
//                            run cpu kernels inline: worker w is thread k0 of the devices whose
//                            strand it holds); a worker given a name is named so instead (the
//                            one worker of a process with one cpu device: "sw:cpu0/k0")
//   sw:caf/clock             CAF's timer ("caf.clock")
//   sw:caf/detached          a detached actor's own thread ("caf.actor")
//
// CAF 0.17 names its timer and detached-actor threads before it calls the hook; its scheduler
// workers it does not name, so they inherit whatever name the creating thread had (often
// "caf.multiplexer"). The runtime loads no io middleman, so every thread the hook sees that is
// neither timer nor detached actor is a worker. With `cores` not empty, worker w runs only on
// cores[w % size].
//
// Threading: thread_started runs on each new thread, concurrently; it touches only an atomic.
#ifndef SOFTWIRE_RUNTIME_HOST_CAF_THREAD_NAMES_H_
#define SOFTWIRE_RUNTIME_HOST_CAF_THREAD_NAMES_H_

#include <atomic>
#include <caf/thread_hook.hpp>
#include <string>
#include <vector>

namespace softwire {
namespace runtime {

class CafThreadNames final : public caf::thread_hook {
 public:
  CafThreadNames(std::vector<int> cores, std::vector<std::string> worker_names);

  void init(caf::actor_system&) override {}
  void thread_started() override;
  void thread_terminates() override {}

 private:
  const std::vector<int> cores_;
  const std::vector<std::string> worker_names_;
  std::atomic<int> workers_{0};
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_CAF_THREAD_NAMES_H_
