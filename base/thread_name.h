// Thread names: every thread softwire starts carries a name that says what it is, so `ps -L`,
// `top -H`, `perf` and gdb point at the component, and the trace can use the same names.
//
// The scheme (docs/RUNTIME.md, "Threads"):
//   sw:cpu0/k1     kernel thread 1 of cpu device 0 of the first node ("sw:n1cpu0/k1" on node 1);
//                  thread k0 of a cpu device is whichever CAF worker holds its strand, and
//                  is named sw:cpu0/k0 when the process has one cpu device and one worker
//   sw:caf/0       CAF scheduler worker 0 otherwise (it routes messages and runs cpu kernels
//                  inline)
//   sw:caf/clock   CAF's timer; sw:caf/io its network multiplexer
//   sw:sim/clock   the timer of sim devices
//   sw:grpc        gRPC's threads
//   sw:job-7       the thread that runs job-7 of the job service (service/job_manager.cc)
//   sw:web         the web view's request threads (service/web/); sw:web/jobs its jobs feed
//
//   NameCurrentThread("sw:cpu0/k1");
//   CurrentThreadName();  // "sw:cpu0/k1"
//
// Linux keeps at most 15 bytes of a name: longer names are cut, not refused. A thread created
// by another inherits its creator's name until it names itself.
//
// Threading: both functions act on the calling thread only and are thread-safe.
#ifndef SOFTWIRE_BASE_THREAD_NAME_H_
#define SOFTWIRE_BASE_THREAD_NAME_H_

#include <string>
#include <string_view>

namespace softwire {

// Every name softwire gives a thread starts with this.
inline constexpr std::string_view kThreadNamePrefix = "sw:";
// The longest name the kernel keeps, in bytes.
inline constexpr size_t kMaxThreadNameBytes = 15;

// Names the calling thread, cut to kMaxThreadNameBytes.
void NameCurrentThread(std::string_view name);
// The calling thread's name; empty if it cannot be read.
std::string CurrentThreadName();

// Runs while alive under `name`, then restores the previous name: threads that a library
// starts inside the scope inherit `name` (gRPC's, whose threads cannot be named otherwise).
class ScopedThreadName {
 public:
  explicit ScopedThreadName(std::string_view name);
  ~ScopedThreadName();
  ScopedThreadName(const ScopedThreadName&) = delete;
  ScopedThreadName& operator=(const ScopedThreadName&) = delete;

 private:
  std::string previous_;
};

}  // namespace softwire

#endif  // SOFTWIRE_BASE_THREAD_NAME_H_
