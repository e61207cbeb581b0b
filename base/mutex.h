// Mutex, MutexLock and CondVar: std::mutex, std::lock_guard/unique_lock and
// std::condition_variable with clang's thread-safety annotations (base/thread_annotations.h),
// which libstdc++'s own types lack; without them `GUARDED_BY` checks nothing. The same costs
// as the standard types: each is one of them and inline calls.
//
//   Mutex mutex_;
//   CondVar changed_;
//   bool ready_ GUARDED_BY(mutex_) = false;
//
//   void Wait() EXCLUDES(mutex_) {
//     MutexLock lock(&mutex_);
//     while (!ready_) changed_.Wait(&lock);   // Loops, not predicates: the analysis sees them.
//   }
//
// Threading: a Mutex is a std::mutex (not recursive); a MutexLock belongs to one thread.
#ifndef SOFTWIRE_BASE_MUTEX_H_
#define SOFTWIRE_BASE_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "base/thread_annotations.h"

namespace softwire {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mutex_.lock(); }
  void Unlock() RELEASE() { mutex_.unlock(); }

 private:
  friend class MutexLock;
  std::mutex mutex_;
};

// Holds `mutex` from construction to destruction; Unlock() and Lock() let go of it and take it
// again in between (for calls that must run without it).
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mutex) ACQUIRE(mutex) : lock_(mutex->mutex_) {}
  ~MutexLock() RELEASE() = default;
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() { lock_.unlock(); }
  void Lock() ACQUIRE() { lock_.lock(); }

 private:
  friend class CondVar;
  std::unique_lock<std::mutex> lock_;
};

// A std::condition_variable waited on through a MutexLock. Waits may wake spuriously: wait in
// a loop on the condition.
class CondVar {
 public:
  void Wait(MutexLock* lock) { condition_.wait(lock->lock_); }
  // False when `deadline` passed.
  template <typename Clock, typename Duration>
  bool WaitUntil(MutexLock* lock, const std::chrono::time_point<Clock, Duration>& deadline) {
    return condition_.wait_until(lock->lock_, deadline) == std::cv_status::no_timeout;
  }
  void NotifyOne() { condition_.notify_one(); }
  void NotifyAll() { condition_.notify_all(); }

 private:
  std::condition_variable condition_;
};

}  // namespace softwire

#endif  // SOFTWIRE_BASE_MUTEX_H_
