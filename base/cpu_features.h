// What the CPU this process runs on can do, detected at run time (cpuid and the OS's saved
// register state), so one build runs on every machine of the project: a Zen 3 has AVX2 only, a
// Zen 4 adds AVX-512 with the bfloat16 dot products (`avx512_bf16`), a Sapphire Rapids AMX.
//
//   CpuFeatures cpu = DetectCpuFeatures();
//   if (!cpu.native_bf16()) LOG(WARNING) << "bf16 products without " << cpu.MissingForBf16();
//
// SOFTWIRE_CPU_FEATURES_OFF (a comma-separated list of feature names, e.g. "avx512_bf16") hides
// features from DetectCpuFeatures, so a test or a user can take the path of a CPU without them
// on any machine (oneDNN's own dispatch has ONEDNN_MAX_CPU_ISA for the same purpose).
//
// Threading: DetectCpuFeatures is safe to call from any thread; it reads the environment each
// time.
#ifndef SOFTWIRE_BASE_CPU_FEATURES_H_
#define SOFTWIRE_BASE_CPU_FEATURES_H_

#include <string>

namespace softwire {

struct CpuFeatures {
  bool avx2 = false;
  bool avx512f = false;
  bool avx512bw = false;     // Byte and word lanes (with avx512f): the bf16 array conversions.
  bool avx512_bf16 = false;  // vdpbf16ps and the conversions (Cooper Lake, Zen 4).
  bool amx_bf16 = false;     // AMX tiles with bf16 (Sapphire Rapids).
  std::string model;         // "AMD EPYC 9R14", from cpuid's brand string; "" if absent.

  // bfloat16 products run at least at twice the float32 rate: avx512_bf16 or amx_bf16.
  bool native_bf16() const { return avx512_bf16 || amx_bf16; }
  // "avx512_bf16 (or amx_bf16)" when native_bf16() is false; "" otherwise.
  std::string MissingForBf16() const;
  // "avx2 avx512f avx512_bf16": the features above that are present.
  std::string Summary() const;
};

CpuFeatures DetectCpuFeatures();

}  // namespace softwire

#endif  // SOFTWIRE_BASE_CPU_FEATURES_H_
