// ThreadBuffer: memory a kernel needs only while one call of it runs on one thread (a oneDNN
// primitive's user scratchpad, an operand reordered into the primitive's layout, a product
// epilogue's band of c), kept per
// thread and grown to the largest request, instead of one buffer per band or lane that each
// kernel holds for its whole life. A device's kernels run on its few threads, one call at a
// time on each, so the threads' buffers bound what all of them need together: bf16 charlm held
// 16 MiB of per-band scratchpads before (docs/DECISIONS.md, 34).
//
//   void* scratchpad = ThreadBuffer(ThreadBufferUse::kScratchpad, size);
//   band.scratchpad.set_data_handle(scratchpad);  // then execute, on this thread
//
// Contract: the pointer is page-aligned, at least `bytes` long, and valid on the calling
// thread until that thread asks for the same use again (a larger request moves it); what it
// held before is not kept. Uses are distinct buffers, so one call may hold several at once.
// Thread-safe: every thread has its own. Allocates only when a request is larger than any
// before it on that thread, and then with mmap, which no malloc counter sees.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_THREAD_BUFFERS_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_THREAD_BUFFERS_H_

#include <cstddef>

namespace softwire {
namespace runtime {

enum class ThreadBufferUse {
  kProductRows,  // A product epilogue's band of c where no output can hold it (fused_kernel.cc).
  kScratchpad,   // A primitive's user-mode scratchpad.
  kOperandA,     // Reordered operands of one primitive execution.
  kOperandB,
  kOperandOut,
  kCount,
};

void* ThreadBuffer(ThreadBufferUse use, size_t bytes);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_THREAD_BUFFERS_H_
