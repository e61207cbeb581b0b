// Whole arrays from float32 to bfloat16, for the kernels that write bfloat16 (cast, fused, the
// optimizer updates that write a weight's bfloat16 copy): element for element what
// base/bfloat16.h's ToBFloat16 gives (round to nearest, ties to even; a NaN stays a quiet NaN),
// with the widest instructions this CPU has, chosen at run time.
//
// Why: rounding is integer work (add, shift, select, narrow) that costs more than the memory it
// moves. Built for AVX2 (SOFTWIRE_KERNEL_FLAGS), a float32 -> bfloat16 pass over a megabyte in
// cache took 1.47x as long as the same loop built for AVX-512 with byte and word lanes, whose
// narrowing store packs 16 lanes at once. So where DetectCpuFeatures() finds avx512f and
// avx512bw (a Zen 4, every AVX-512 Xeon) the loops below run a copy of themselves compiled for
// them; elsewhere (a Zen 3, other architectures, SOFTWIRE_CPU_FEATURES_OFF=avx512bw) the
// portable copy. The choice is made once per process, at the first call.
//
// Threading: safe from any thread; x and y must not overlap.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_BF16_ARRAYS_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_BF16_ARRAYS_H_

#include <cstdint>

#include "base/bfloat16.h"

namespace softwire {
namespace runtime {

// y[i] = ToBFloat16(x[i]) for i in [0, count).
void ConvertToBFloat16(const float* x, BFloat16* y, int64_t count);

// y[i] = ToFloat(ToBFloat16(x[i])): the value a cast to bfloat16 leaves, kept in float32.
void RoundThroughBFloat16(const float* x, float* y, int64_t count);

// y[i] = the upper half of x[i]: exact where every x[i] is a bfloat16 value already (a cast's
// value kept in float32), and cheaper than rounding.
void TruncateToBFloat16(const float* x, BFloat16* y, int64_t count);

// Whether the wide copies run in this process ("avx512bw" or "portable"), for benches.
const char* BFloat16ArraysImplementation();

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_BF16_ARRAYS_H_
