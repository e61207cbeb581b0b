// Clang's thread-safety attributes (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html),
// spelled as abseil spells them, so `-Wthread-safety` checks the locking that comments used to
// describe in prose. They expand to nothing on compilers without the analysis (GCC), so the
// normal build is unchanged; scripts/check-thread-safety builds with clang and the analysis.
//
//   class Counter {
//    public:
//     void Add() EXCLUDES(mutex_) {
//       MutexLock lock(&mutex_);
//       ++count_;
//     }
//    private:
//     Mutex mutex_;                     // base/mutex.h: std::mutex is not annotated.
//     int64_t count_ GUARDED_BY(mutex_) = 0;
//   };
#ifndef SOFTWIRE_BASE_THREAD_ANNOTATIONS_H_
#define SOFTWIRE_BASE_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define SOFTWIRE_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define SOFTWIRE_THREAD_ANNOTATION(x)
#endif

// A type whose objects are locks ("mutex" in messages).
#define CAPABILITY(x) SOFTWIRE_THREAD_ANNOTATION(capability(x))
// An RAII type that holds a lock from construction to destruction.
#define SCOPED_CAPABILITY SOFTWIRE_THREAD_ANNOTATION(scoped_lockable)
// abseil (reached through gRPC's headers) defines GUARDED_BY, PT_GUARDED_BY and
// NO_THREAD_SAFETY_ANALYSIS too, to the same attributes: ours replace them, whichever header
// came first.
#undef GUARDED_BY
#undef PT_GUARDED_BY
#undef NO_THREAD_SAFETY_ANALYSIS
// A member read or written only with `x` held.
#define GUARDED_BY(x) SOFTWIRE_THREAD_ANNOTATION(guarded_by(x))
// A pointer member whose pointee is read or written only with `x` held.
#define PT_GUARDED_BY(x) SOFTWIRE_THREAD_ANNOTATION(pt_guarded_by(x))
// A function its callers must call with the locks held / not held.
#define REQUIRES(...) SOFTWIRE_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) SOFTWIRE_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// A function that takes / releases the locks (this object's own when none are named).
#define ACQUIRE(...) SOFTWIRE_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) SOFTWIRE_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) SOFTWIRE_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// A function that returns a reference to the lock guarding something.
#define RETURN_CAPABILITY(x) SOFTWIRE_THREAD_ANNOTATION(lock_returned(x))
// Turns the analysis off for one function; say why next to it.
#define NO_THREAD_SAFETY_ANALYSIS SOFTWIRE_THREAD_ANNOTATION(no_thread_safety_analysis)

#endif  // SOFTWIRE_BASE_THREAD_ANNOTATIONS_H_
