// OneDnnOneThread: while it lives, oneDNN primitives created on this thread are made for one
// thread.
//
// Debian's oneDNN threads through OpenMP, and it fixes a primitive's split of the work over
// threads when the primitive descriptor is created, from omp_get_max_threads() of the creating
// thread (the machine's cores unless OMP_NUM_THREADS says otherwise). The kernels run every
// primitive on one device thread (omp_set_num_threads(1) there), but a primitive made for 2
// threads still opens an OpenMP team of 2 when it runs, so each device thread started another
// thread that spun in oneDNN's barriers beside the device's own: ResNet-20's filter gradients
// took 3-4x (float32) and 10x (bf16; 500x for one strided shape) the time of primitives made for
// one thread (bench/conv/filter_gradient_threads_bench), and their bits depended on the cores of
// the machine that ran them. Create every primitive inside one of these.
//
// Threading: affects the calling thread only (OpenMP's nthreads-var is per thread); restores the
// previous value when it ends. Only in builds with oneDNN (SOFTWIRE_HAVE_DNNL, OpenMP linked).
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_ONEDNN_THREADS_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_ONEDNN_THREADS_H_

#include <omp.h>

namespace softwire {
namespace runtime {

class OneDnnOneThread {
 public:
  OneDnnOneThread() : previous_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OneDnnOneThread() { omp_set_num_threads(previous_); }
  OneDnnOneThread(const OneDnnOneThread&) = delete;
  OneDnnOneThread& operator=(const OneDnnOneThread&) = delete;

 private:
  const int previous_;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_ONEDNN_THREADS_H_
