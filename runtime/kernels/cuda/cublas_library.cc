#include "runtime/kernels/cuda/cublas_library.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace softwire {
namespace runtime {
namespace {

template <typename Function>
Status Resolve(void* library, const char* name, Function* function) {
  *function = reinterpret_cast<Function>(dlsym(library, name));
  if (*function == nullptr) {
    return FailedPreconditionError(std::string("cuBLAS has no ") + name + ": " + dlerror());
  }
  return Status::Ok();
}

StatusOr<CublasLibrary> Open() {
  const std::string soname = SOFTWIRE_CUBLAS_SONAME;
  void* library = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    library =
        dlopen((std::string(SOFTWIRE_CUBLAS_DIR) + "/" + soname).c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (library == nullptr) {
    return FailedPreconditionError("cannot load cuBLAS (" + soname + ", also tried " +
                                   SOFTWIRE_CUBLAS_DIR + "): " + dlerror());
  }
  CublasLibrary table;
  SOFTWIRE_RETURN_IF_ERROR(Resolve(library, "cublasCreate_v2", &table.create));
  SOFTWIRE_RETURN_IF_ERROR(Resolve(library, "cublasDestroy_v2", &table.destroy));
  SOFTWIRE_RETURN_IF_ERROR(Resolve(library, "cublasSetStream_v2", &table.set_stream));
  SOFTWIRE_RETURN_IF_ERROR(Resolve(library, "cublasSetMathMode", &table.set_math_mode));
  SOFTWIRE_RETURN_IF_ERROR(
      Resolve(library, "cublasGemmStridedBatchedEx", &table.gemm_strided_batched_ex));
  SOFTWIRE_RETURN_IF_ERROR(Resolve(library, "cublasGetStatusName", &table.status_name));
  SOFTWIRE_RETURN_IF_ERROR(Resolve(library, "cublasGetStatusString", &table.status_string));
  return table;
}

}  // namespace

StatusOr<const CublasLibrary*> CublasLibrary::Load() {
  static std::once_flag once;
  static StatusOr<CublasLibrary>* loaded = nullptr;
  std::call_once(once, [] { loaded = new StatusOr<CublasLibrary>(Open()); });
  if (!loaded->ok()) return loaded->status();
  return &loaded->value();
}

}  // namespace runtime
}  // namespace softwire
