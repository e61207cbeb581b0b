// The entry point every fuzz target defines, as libFuzzer calls it (fuzz/README.md).
//
// One input per call; the call must not crash, leak or hang on any bytes: bad input is a Status
// that the target drops. A target is linked twice: with libFuzzer (-fsanitize=fuzzer, the
// clang build of scripts/fuzz) and with replay_main.cc (every build: CTest feeds it the corpus
// and the regressions).
#ifndef SOFTWIRE_FUZZ_FUZZ_TARGET_H_
#define SOFTWIRE_FUZZ_FUZZ_TARGET_H_

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#endif  // SOFTWIRE_FUZZ_FUZZ_TARGET_H_
