// JobQueue: the jobs waiting for devices, in submission order, and which of them start when
// devices are free. First come, first served, with backfill: a job that does not fit the free
// devices keeps its place, and a later one that fits starts before it. (A job that needs every
// device may so wait while smaller ones keep starting; a server's jobs are few and short enough
// that this has been the better trade: no device idles while a job could use it.)
//
//   JobQueue queue;
//   queue.Push("job-1", 2);
//   std::vector<bool> free = {true, true, false};
//   for (const JobQueue::Start& start : queue.TakeStartable(&free)) Run(start);
//
// Threading: not thread-safe; the JobManager guards it.
#ifndef SOFTWIRE_SERVICE_JOB_QUEUE_H_
#define SOFTWIRE_SERVICE_JOB_QUEUE_H_

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace softwire {
namespace service {

class JobQueue {
 public:
  // A job to start, on the devices (indices into the free list) it was given.
  struct Start {
    std::string job_id;
    std::vector<int> devices;
  };

  // Queues `job_id`, which needs `devices` devices, behind every job queued before.
  void Push(std::string job_id, int devices);
  // Takes a job out of the queue; false when it was not queued.
  bool Remove(const std::string& job_id);
  int64_t size() const { return static_cast<int64_t>(queued_.size()); }
  // Jobs ahead of `job_id`; -1 when it is not queued.
  int64_t Position(const std::string& job_id) const;

  // The jobs that start now, in queue order, taken out of the queue: each gets the first free
  // devices it needs, which are then marked taken in `free`.
  std::vector<Start> TakeStartable(std::vector<bool>* free);

 private:
  struct Queued {
    std::string job_id;
    int devices = 1;
  };
  std::deque<Queued> queued_;
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_JOB_QUEUE_H_
