// CentralQueuePolicy: what every scheduler policy of softwire with one central job queue shares,
// the entry points CAF 0.17's coordinator and workers call, each sent to the policy's own
// `enqueue(coordinator, job)` (SpinningWorkSharing, ReserveWorkSharing). The policy supplies
// enqueue, dequeue, foreach_central_resumable and its coordinator_data and worker_data.
//
// Threading: as the policy's.
#ifndef SOFTWIRE_RUNTIME_HOST_CENTRAL_QUEUE_POLICY_H_
#define SOFTWIRE_RUNTIME_HOST_CENTRAL_QUEUE_POLICY_H_

#include <caf/policy/unprofiled.hpp>
#include <caf/resumable.hpp>

namespace softwire {
namespace runtime {

template <class Policy>
class CentralQueuePolicy : public caf::policy::unprofiled {
 public:
  template <class Coordinator>
  void central_enqueue(Coordinator* self, caf::resumable* job) {
    policy().enqueue(self, job);
  }

  template <class Worker>
  void external_enqueue(Worker* self, caf::resumable* job) {
    policy().enqueue(self->parent(), job);
  }

  template <class Worker>
  void internal_enqueue(Worker* self, caf::resumable* job) {
    policy().enqueue(self->parent(), job);
  }

  template <class Worker>
  void resume_job_later(Worker* self, caf::resumable* job) {
    policy().enqueue(self->parent(), job);
  }

  // No per-worker queues: nothing to visit.
  template <class Worker, class UnaryFunction>
  void foreach_resumable(Worker*, UnaryFunction) {}

 private:
  Policy& policy() { return static_cast<Policy&>(*this); }
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_CENTRAL_QUEUE_POLICY_H_
