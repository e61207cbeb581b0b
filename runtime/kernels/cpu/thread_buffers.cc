#include "runtime/kernels/cpu/thread_buffers.h"

#include <glog/logging.h>
#include <sys/mman.h>

#include <array>

namespace softwire {
namespace runtime {
namespace {

// Mapped, not malloc'd: a buffer given back when it grows (or its thread ends) returns its
// pages to the system at once, where a freed malloc block of this size stays resident in the
// thread's malloc arena (glibc raises its mmap threshold after such a free).
struct Buffer {
  void* data = nullptr;
  size_t bytes = 0;

  ~Buffer() { Release(); }
  void Release() {
    if (data != nullptr) ::munmap(data, bytes);
    data = nullptr;
    bytes = 0;
  }
};

}  // namespace

void* ThreadBuffer(ThreadBufferUse use, size_t bytes) {
  thread_local std::array<Buffer, static_cast<size_t>(ThreadBufferUse::kCount)> buffers;
  Buffer& buffer = buffers[static_cast<size_t>(use)];
  if (buffer.data != nullptr && buffer.bytes >= bytes) return buffer.data;
  buffer.Release();  // First: the old and the new are never held at once.
  const size_t size = bytes == 0 ? 1 : bytes;
  void* data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(data != MAP_FAILED) << "ThreadBuffer: mmap of " << size << " bytes failed";
  buffer.data = data;
  buffer.bytes = size;
  return data;
}

}  // namespace runtime
}  // namespace softwire
