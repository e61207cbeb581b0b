# Build options. Every option has a default that builds on a fresh Debian 12 machine.

option(SOFTWIRE_WERROR "Treat compiler warnings as errors (CI turns this on)" OFF)
set(SOFTWIRE_SANITIZE "" CACHE STRING
    "Sanitizer build: empty, 'address' (ASan + UBSan), 'thread' (TSan) or 'fuzzer' (clang only: \
ASan + UBSan + libFuzzer's coverage, and the fuzz targets of fuzz/; scripts/fuzz)")
set_property(CACHE SOFTWIRE_SANITIZE PROPERTY STRINGS "" address thread fuzzer)
set(SOFTWIRE_CUDA "AUTO" CACHE STRING
    "CUDA devices: AUTO (build when the toolkit is found), ON (require it) or OFF")
set_property(CACHE SOFTWIRE_CUDA PROPERTY STRINGS AUTO ON OFF)
set(SOFTWIRE_CUDA_ARCHITECTURES "90" CACHE STRING "CUDA architectures to build for")
option(SOFTWIRE_VECTORIZE
       "Compile kernels for x86-64-v3 (AVX2 + FMA) when the build machine has it" ON)

# Warnings: applied to our own targets only (never to generated protobuf code).
set(SOFTWIRE_WARNING_FLAGS -Wall -Wextra -Wpedantic -Wno-unused-parameter)
if(SOFTWIRE_WERROR)
  list(APPEND SOFTWIRE_WARNING_FLAGS -Werror)
endif()

if(SOFTWIRE_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(SOFTWIRE_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(SOFTWIRE_SANITIZE STREQUAL "fuzzer")
  # Every library carries libFuzzer's coverage; only the fuzz targets link libFuzzer itself
  # (softwire_fuzz_target), so the other executables keep their own main().
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "SOFTWIRE_SANITIZE=fuzzer needs clang (libFuzzer); scripts/fuzz sets it")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(NOT SOFTWIRE_SANITIZE STREQUAL "")
  message(FATAL_ERROR "SOFTWIRE_SANITIZE must be empty, 'address', 'thread' or 'fuzzer'")
endif()

# Kernel code generation. x86-64-v3 = AVX2, FMA, BMI2, F16C: present on every x86 server of
# the last decade, including the CI machines and the GPU hosts. Checked on the build machine.
set(SOFTWIRE_KERNEL_FLAGS "")
if(SOFTWIRE_VECTORIZE AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  include(CheckCXXSourceRuns)
  set(CMAKE_REQUIRED_FLAGS "-march=x86-64-v3")
  check_cxx_source_runs("
    #include <immintrin.h>
    int main() {
      __builtin_cpu_init();
      return (__builtin_cpu_supports(\"avx2\") && __builtin_cpu_supports(\"fma\")) ? 0 : 1;
    }" SOFTWIRE_HOST_HAS_X86_64_V3)
  unset(CMAKE_REQUIRED_FLAGS)
  if(SOFTWIRE_HOST_HAS_X86_64_V3)
    set(SOFTWIRE_KERNEL_FLAGS -march=x86-64-v3)
  endif()
endif()
