// LongWork: a thread says it is about to be busy for a while, so that the scheduler that owns it
// can let another thread take its queued work meanwhile (as Go's runtime hands a thread's
// processor on when the thread enters a system call).
//
// A cpu device runs its kernels inline on the CAF worker that holds its strand; a node agent
// keeps one worker in reserve for the messages that arrive while a kernel runs
// (runtime/host/reserve_work_sharing.h, docs/DECISIONS.md 37). The strand marks a kernel the cost
// model says is long with a LongWorkScope; the scheduler's policy, which installed itself as
// this worker thread's listener, wakes the reserve only then, so a stream of short firings keeps
// running on one thread without cross-thread wake-ups.
//
//   {
//     LongWorkScope scope(/*long_work=*/request.estimated_seconds >= kLongWorkSeconds);
//     kernel->Run(context);
//   }
//
// Threading: the listener is per thread (thread_local); a thread with none ignores the scopes.
#ifndef SOFTWIRE_BASE_LONG_WORK_H_
#define SOFTWIRE_BASE_LONG_WORK_H_

namespace softwire {

// Work at least this long (seconds, estimated) is worth a reserve thread's wake-up (5-80 us on
// a small VM, docs/MACHINE.md) for the messages that arrive during it.
constexpr double kLongWorkSeconds = 200e-6;

class LongWorkListener {
 public:
  virtual ~LongWorkListener() = default;
  // The calling thread begins, and ends, long work. Called in pairs, never nested.
  virtual void LongWorkBegan() = 0;
  virtual void LongWorkEnded() = 0;
};

// Sets the calling thread's listener (null: none). The listener must outlive the thread's
// scopes; the scheduler that installs it clears it before it is destroyed.
void SetThreadLongWorkListener(LongWorkListener* listener);
LongWorkListener* ThreadLongWorkListener();

// Tells the calling thread's listener, if any, when `long_work`: Began now, Ended at the end of
// the scope. A scope inside another long scope on the same thread tells nothing.
class LongWorkScope {
 public:
  explicit LongWorkScope(bool long_work);
  ~LongWorkScope();
  LongWorkScope(const LongWorkScope&) = delete;
  LongWorkScope& operator=(const LongWorkScope&) = delete;

 private:
  LongWorkListener* told_ = nullptr;
};

}  // namespace softwire

#endif  // SOFTWIRE_BASE_LONG_WORK_H_
