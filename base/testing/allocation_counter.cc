#include "base/testing/allocation_counter.h"

#include <cstdlib>
#include <new>

namespace {

thread_local bool counting = false;
thread_local int64_t counted = 0;

void* Allocate(std::size_t size) noexcept {
  if (counting) ++counted;
  return std::malloc(size == 0 ? 1 : size);
}

}  // namespace

void* operator new(std::size_t size) {
  if (void* memory = Allocate(size)) return memory;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  return operator new(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return Allocate(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return Allocate(size);
}
// Deletes to match: the default ones would be the sanitizers' when they are on. GCC cannot see
// that every pointer reaching these came from the malloc above, hence the pragma.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* memory) noexcept {
  std::free(memory);
}
void operator delete(void* memory, std::size_t) noexcept {
  std::free(memory);
}
void operator delete[](void* memory) noexcept {
  std::free(memory);
}
void operator delete[](void* memory, std::size_t) noexcept {
  std::free(memory);
}
void operator delete(void* memory, const std::nothrow_t&) noexcept {
  std::free(memory);
}
void operator delete[](void* memory, const std::nothrow_t&) noexcept {
  std::free(memory);
}
#pragma GCC diagnostic pop

namespace softwire {
namespace testing {

AllocationCounter::AllocationCounter() {
  counted = 0;
  counting = true;
}

AllocationCounter::~AllocationCounter() {
  counting = false;
}

int64_t AllocationCounter::allocations() const {
  return counted;
}

}  // namespace testing
}  // namespace softwire
