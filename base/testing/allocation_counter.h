// Counting heap allocations in tests that promise a path allocates nothing (the actor
// protocol, trace recording, the cpu kernels).
//
// A test binary that links softwire_allocation_counter gets its global operator new and delete
// replaced (malloc and free underneath; the sanitizers' own would otherwise be used for delete),
// counting every new made on a thread while an AllocationCounter is alive on that thread:
//
//   AllocationCounter counter;
//   ... the code under test, on this thread ...
//   EXPECT_EQ(counter.allocations(), 0);
//
// Only the constructing thread counts: work handed to other threads is not seen.
#ifndef SOFTWIRE_BASE_TESTING_ALLOCATION_COUNTER_H_
#define SOFTWIRE_BASE_TESTING_ALLOCATION_COUNTER_H_

#include <cstdint>

namespace softwire {
namespace testing {

class AllocationCounter {
 public:
  AllocationCounter();   // Starts counting on this thread, from zero.
  ~AllocationCounter();  // Stops.
  AllocationCounter(const AllocationCounter&) = delete;
  AllocationCounter& operator=(const AllocationCounter&) = delete;

  // Allocations on this thread since construction.
  int64_t allocations() const;
};

}  // namespace testing
}  // namespace softwire

#endif  // SOFTWIRE_BASE_TESTING_ALLOCATION_COUNTER_H_
