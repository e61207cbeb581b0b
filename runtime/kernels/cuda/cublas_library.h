// CublasLibrary: the cuBLAS functions the cuda kernels call, loaded with dlopen when the first
// cuda queue is made, not linked. Linked, libcublasLt (540 MB) is mapped and relocated into
// every softwire process at start: ~215 MiB of resident memory even where no GPU is used
// (peak_memory_test caught it). Loaded once per process and never unloaded: the handle of a
// shared library is process-wide by nature (the one process-wide object of this folder).
//
// Threading: Load is thread-safe; the table is read-only afterwards.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CUDA_CUBLAS_LIBRARY_H_
#define SOFTWIRE_RUNTIME_KERNELS_CUDA_CUBLAS_LIBRARY_H_

#include <cublas_v2.h>

#include "base/status.h"

namespace softwire {
namespace runtime {

struct CublasLibrary {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  // cublasGemmStridedBatchedEx is overloaded in C++; this is the cublasComputeType_t one.
  using GemmStridedBatchedEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                                  cublasOperation_t, int, int, int, const void*,
                                                  const void*, cudaDataType, int, long long,
                                                  const void*, cudaDataType, int, long long,
                                                  const void*, void*, cudaDataType, int, long long,
                                                  int, cublasComputeType_t, cublasGemmAlgo_t);
  GemmStridedBatchedEx gemm_strided_batched_ex = nullptr;
  decltype(&cublasGetStatusName) status_name = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;

  // The library, loaded on the first call: libcublas.so.<toolkit major> from the library path,
  // else from the toolkit's folder at build time. FailedPrecondition naming what is missing.
  static StatusOr<const CublasLibrary*> Load();
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CUDA_CUBLAS_LIBRARY_H_
