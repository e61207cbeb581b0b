#include "base/thread_affinity.h"

#include <pthread.h>
#include <sched.h>

namespace softwire {

bool PinCurrentThread(int core) {
  if (core < 0 || core >= CPU_SETSIZE) return false;
  cpu_set_t cores;
  CPU_ZERO(&cores);
  CPU_SET(core, &cores);
  return pthread_setaffinity_np(pthread_self(), sizeof(cores), &cores) == 0;
}

std::vector<int> AllowedCores() {
  cpu_set_t cores;
  CPU_ZERO(&cores);
  std::vector<int> allowed;
  if (sched_getaffinity(0, sizeof(cores), &cores) != 0) return allowed;
  for (int core = 0; core < CPU_SETSIZE; ++core) {
    if (CPU_ISSET(core, &cores)) allowed.push_back(core);
  }
  return allowed;
}

}  // namespace softwire
