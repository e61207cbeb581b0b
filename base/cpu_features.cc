#include "base/cpu_features.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define SOFTWIRE_X86 1
#endif

namespace softwire {
namespace {

bool NamedIn(const std::string& list, const std::string& name) {
  std::stringstream stream(list);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (item == name) return true;
  }
  return false;
}

#ifdef SOFTWIRE_X86
// XCR0: which register states the OS saves on a context switch. AVX-512 needs opmask, upper
// ZMM and high ZMM (bits 5-7) besides SSE and AVX (bits 1-2); AMX needs tile config and data
// (bits 17-18). Without them the instructions fault even where cpuid lists them.
uint64_t ReadXcr0() {
  uint32_t eax = 0;
  uint32_t edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

void Detect(CpuFeatures* cpu) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return;
  const bool osxsave = (ecx & (1u << 27)) != 0;
  const uint64_t xcr0 = osxsave ? ReadXcr0() : 0;
  const bool avx_state = (xcr0 & 0x6) == 0x6;
  const bool avx512_state = avx_state && (xcr0 & 0xe0) == 0xe0;
  const bool amx_state = (xcr0 & 0x60000) == 0x60000;
  if (__get_cpuid_max(0, nullptr) >= 7) {
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    cpu->avx2 = avx_state && (ebx & (1u << 5)) != 0;
    cpu->avx512f = avx512_state && (ebx & (1u << 16)) != 0;
    cpu->avx512bw = cpu->avx512f && (ebx & (1u << 30)) != 0;
    cpu->amx_bf16 = amx_state && (edx & (1u << 22)) != 0;
    __cpuid_count(7, 1, eax, ebx, ecx, edx);
    cpu->avx512_bf16 = cpu->avx512f && (eax & (1u << 5)) != 0;
  }
  if (__get_cpuid_max(0x80000000, nullptr) >= 0x80000004) {
    char brand[49] = {};
    for (unsigned leaf = 0; leaf < 3; ++leaf) {
      __cpuid(0x80000002 + leaf, eax, ebx, ecx, edx);
      std::memcpy(brand + leaf * 16 + 0, &eax, 4);
      std::memcpy(brand + leaf * 16 + 4, &ebx, 4);
      std::memcpy(brand + leaf * 16 + 8, &ecx, 4);
      std::memcpy(brand + leaf * 16 + 12, &edx, 4);
    }
    cpu->model = brand;
    const size_t end = cpu->model.find_last_not_of(' ');
    cpu->model = end == std::string::npos ? "" : cpu->model.substr(0, end + 1);
  }
}
#else
void Detect(CpuFeatures*) {}
#endif

}  // namespace

std::string CpuFeatures::MissingForBf16() const {
  return native_bf16() ? "" : "avx512_bf16 (or amx_bf16)";
}

std::string CpuFeatures::Summary() const {
  std::string summary;
  auto add = [&summary](bool present, const char* name) {
    if (!present) return;
    if (!summary.empty()) summary += " ";
    summary += name;
  };
  add(avx2, "avx2");
  add(avx512f, "avx512f");
  add(avx512_bf16, "avx512_bf16");
  add(amx_bf16, "amx_bf16");
  return summary;
}

CpuFeatures DetectCpuFeatures() {
  CpuFeatures cpu;
  Detect(&cpu);
  const char* off = std::getenv("SOFTWIRE_CPU_FEATURES_OFF");
  if (off != nullptr) {
    const std::string list = off;
    if (NamedIn(list, "avx2")) cpu.avx2 = false;
    if (NamedIn(list, "avx512f")) cpu.avx512f = false;
    if (NamedIn(list, "avx512f") || NamedIn(list, "avx512bw")) cpu.avx512bw = false;
    if (NamedIn(list, "avx512_bf16")) cpu.avx512_bf16 = false;
    if (NamedIn(list, "amx_bf16")) cpu.amx_bf16 = false;
  }
  return cpu;
}

}  // namespace softwire
