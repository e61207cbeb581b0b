# Helpers that give every softwire target the same flags and record which layer it belongs to.

# softwire_library(NAME <name> SOURCES ... DEPENDS ...)
# A static library of our own code, compiled with the project warnings, includes rooted at the
# source tree (`#include "base/status.h"`) and the generated protos.
function(softwire_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;PRIVATE_DEPENDS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC "${PROJECT_SOURCE_DIR}" "${PROJECT_BINARY_DIR}")
  target_compile_options(${name} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${SOFTWIRE_WARNING_FLAGS}>)
  target_link_libraries(${name} PUBLIC ${ARG_DEPENDS} PRIVATE ${ARG_PRIVATE_DEPENDS})
endfunction()

# softwire_executable(NAME <name> SOURCES ... DEPENDS ...)
function(softwire_executable name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}" "${PROJECT_BINARY_DIR}")
  target_compile_options(${name} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${SOFTWIRE_WARNING_FLAGS}>)
  target_link_libraries(${name} PRIVATE ${ARG_DEPENDS})
endfunction()

# softwire_test(NAME <name> SOURCES ... DEPENDS ... [TIMEOUT seconds] [LABELS ...])
# A GoogleTest binary registered with CTest. Every test has a time bound (default 60 s).
function(softwire_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPENDS;LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 60)
  endif()
  softwire_executable(${name} SOURCES ${ARG_SOURCES}
                      DEPENDS ${ARG_DEPENDS} GTest::gtest GTest::gtest_main)
  add_test(NAME ${name} COMMAND ${name} --gtest_brief=1
           WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT})
  if(ARG_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}")
  endif()
endfunction()

# softwire_fuzz_target(NAME <name> SOURCES ... DEPENDS ... [TIMEOUT seconds])
# A libFuzzer target (fuzz/README.md): SOURCES define LLVMFuzzerTestOneInput. Every build links
# them with fuzz/replay_main.cc as <name>_replay, a CTest test that feeds it every file of
# fuzz/corpus/<short name>/ and fuzz/regressions/<short name>/ (<name> without its "fuzz_"
# prefix), bounded by TIMEOUT (default 120 s). The fuzzer build (SOFTWIRE_SANITIZE=fuzzer)
# also links them with libFuzzer as <name>.
function(softwire_fuzz_target name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPENDS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  string(REGEX REPLACE "^fuzz_" "" short_name "${name}")
  softwire_executable(${name}_replay SOURCES "${PROJECT_SOURCE_DIR}/fuzz/replay_main.cc"
                      ${ARG_SOURCES} DEPENDS ${ARG_DEPENDS})
  add_test(NAME ${name}_replay
           COMMAND ${name}_replay fuzz/corpus/${short_name} fuzz/regressions/${short_name}
           WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
  set_tests_properties(${name}_replay PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS fuzz)
  if(SOFTWIRE_SANITIZE STREQUAL "fuzzer")
    softwire_executable(${name} SOURCES ${ARG_SOURCES} DEPENDS ${ARG_DEPENDS})
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  endif()
endfunction()

# The dependency rules of docs/ARCHITECTURE.md, checked on every configure and by a test:
# runtime never includes the compiler; actors know neither CAF nor gRPC; placement knows
# nothing of the runtime.
function(softwire_check_layering)
  add_test(NAME layering_test
           COMMAND "${PROJECT_SOURCE_DIR}/scripts/check-layering" "${PROJECT_SOURCE_DIR}")
  set_tests_properties(layering_test PROPERTIES TIMEOUT 30)
endfunction()

# Every source is as scripts/format (clang-format, the repository's .clang-format) leaves it.
function(softwire_check_format)
  add_test(NAME format_test COMMAND "${PROJECT_SOURCE_DIR}/scripts/format" --check)
  set_tests_properties(format_test PROPERTIES TIMEOUT 120)
endfunction()

# softwire_add_subdirectories(dir...): adds each listed subdirectory. A listed folder without a
# CMakeLists.txt is a configure error naming it, never a silently smaller build.
function(softwire_add_subdirectories)
  foreach(directory IN LISTS ARGN)
    if(NOT EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${directory}/CMakeLists.txt")
      message(FATAL_ERROR "softwire_add_subdirectories: ${CMAKE_CURRENT_SOURCE_DIR}/${directory} "
                          "has no CMakeLists.txt; add it or remove '${directory}' from the list")
    endif()
    add_subdirectory(${directory})
  endforeach()
endfunction()
