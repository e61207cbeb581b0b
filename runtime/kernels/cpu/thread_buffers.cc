#include "runtime/kernels/cpu/thread_buffers.h"

#include <array>
#include <memory>
#include <new>

namespace softwire {
namespace runtime {
namespace {

constexpr std::align_val_t kAlignment{64};

struct AlignedFree {
  void operator()(void* data) const { ::operator delete(data, kAlignment); }
};

struct Buffer {
  std::unique_ptr<void, AlignedFree> data;
  size_t bytes = 0;
};

}  // namespace

void* ThreadBuffer(ThreadBufferUse use, size_t bytes) {
  thread_local std::array<Buffer, static_cast<size_t>(ThreadBufferUse::kCount)> buffers;
  Buffer& buffer = buffers[static_cast<size_t>(use)];
  if (buffer.bytes < bytes || buffer.data == nullptr) {
    buffer.data.reset();  // Free first: the old and the new never held at once.
    const size_t size = bytes == 0 ? 1 : bytes;
    buffer.data.reset(::operator new(size, kAlignment));
    buffer.bytes = size;
  }
  return buffer.data.get();
}

}  // namespace runtime
}  // namespace softwire
