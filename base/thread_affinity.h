// Thread affinity: pins the calling thread to one core, for devices that ask for pinned
// threads (`softwire run --pin-threads`, docs/RUNTIME.md "Threads").
//
// Threading: acts on the calling thread only.
#ifndef SOFTWIRE_BASE_THREAD_AFFINITY_H_
#define SOFTWIRE_BASE_THREAD_AFFINITY_H_

#include <vector>

namespace softwire {

// Lets the calling thread run only on `core`. False, and the thread stays unpinned, when the
// process may not use that core (a cpuset or taskset that excludes it): pinning is a speed
// hint, never a reason to fail.
bool PinCurrentThread(int core);

// The cores this process may run on (its affinity mask), in increasing order.
std::vector<int> AllowedCores();

}  // namespace softwire

#endif  // SOFTWIRE_BASE_THREAD_AFFINITY_H_
