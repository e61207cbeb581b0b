# Third-party dependencies, all from Debian 12 packages (scripts/install-deps installs them).
# Nothing is downloaded at configure, build or run time.

find_package(Threads REQUIRED)
find_package(CAF 0.17 REQUIRED)
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_package(glog CONFIG REQUIRED)
find_package(GTest REQUIRED)
# Header-only: JSON reading for trace files (trace/json.h).
find_package(nlohmann_json 3.11 CONFIG REQUIRED)

# BLAS: OpenBLAS (pthreads build). docs/KERNELS.md ("BLAS: OpenBLAS or oneDNN") records why.
find_package(OpenBLAS CONFIG QUIET)
find_path(OPENBLAS_CBLAS_INCLUDE_DIR NAMES cblas.h
          PATHS /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas
          PATH_SUFFIXES openblas-pthread openblas)
find_library(OPENBLAS_LIBRARY NAMES openblas
             PATHS /usr/lib/x86_64-linux-gnu/openblas-pthread)
if(NOT OPENBLAS_CBLAS_INCLUDE_DIR OR NOT OPENBLAS_LIBRARY)
  message(FATAL_ERROR "OpenBLAS not found: run scripts/install-deps (libopenblas-dev)")
endif()
add_library(softwire::blas INTERFACE IMPORTED)
set_target_properties(softwire::blas PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${OPENBLAS_CBLAS_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES "${OPENBLAS_LIBRARY}")

# oneDNN (Debian's libdnnl-dev, installed by scripts/install-deps) runs the bf16 products and the
# convolutions (runtime/kernels/CMakeLists.txt) and the BLAS comparison benchmark. Debian's
# dnnl-config.cmake insists on OpenCL, so find the library directly.
find_path(DNNL_INCLUDE_DIR NAMES dnnl.h)
find_library(DNNL_LIBRARY NAMES dnnl)
if(DNNL_INCLUDE_DIR AND DNNL_LIBRARY)
  add_library(softwire::dnnl INTERFACE IMPORTED)
  set_target_properties(softwire::dnnl PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${DNNL_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${DNNL_LIBRARY}")
endif()

# CUDA is optional. AUTO builds the cuda device when a toolkit is found.
set(SOFTWIRE_HAVE_CUDA OFF)
if(NOT SOFTWIRE_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS "/usr/local/cuda/bin/nvcc")
    set(CMAKE_CUDA_COMPILER "/usr/local/cuda/bin/nvcc")
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_ARCHITECTURES "${SOFTWIRE_CUDA_ARCHITECTURES}")
    enable_language(CUDA)
    find_package(CUDAToolkit)
    if(CUDAToolkit_FOUND)
      set(SOFTWIRE_HAVE_CUDA ON)
    endif()
  endif()
  if(SOFTWIRE_CUDA STREQUAL "ON" AND NOT SOFTWIRE_HAVE_CUDA)
    message(FATAL_ERROR "SOFTWIRE_CUDA=ON but no CUDA toolkit was found")
  endif()
endif()
message(STATUS "softwire: CAF ${CAF_VERSION}, protobuf ${Protobuf_VERSION}, "
               "gRPC ${gRPC_VERSION}, CUDA ${SOFTWIRE_HAVE_CUDA}")

# The web view's HTTP server (service/web/): Debian's cpp-httplib, built with OpenSSL, whose
# own TLS calls service/web/web_server.cc makes too.
find_package(OpenSSL REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HTTPLIB IMPORTED_TARGET cpp-httplib)
if(NOT HTTPLIB_FOUND)
  message(FATAL_ERROR "cpp-httplib not found: run scripts/install-deps (libcpp-httplib-dev)")
endif()
