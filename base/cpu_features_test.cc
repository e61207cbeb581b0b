#include "base/cpu_features.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace softwire {
namespace {

// The flags line of /proc/cpuinfo, or "" where there is none (not Linux).
std::string ProcCpuFlags() {
  std::ifstream file("/proc/cpuinfo");
  std::string line;
  while (std::getline(file, line)) {
    if (line.rfind("flags", 0) == 0) return line + " ";
  }
  return "";
}

TEST(CpuFeaturesTest, AgreesWithTheKernelsFlagsWhereLinuxListsThem) {
  const std::string flags = ProcCpuFlags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo";
  unsetenv("SOFTWIRE_CPU_FEATURES_OFF");
  const CpuFeatures cpu = DetectCpuFeatures();
  EXPECT_EQ(cpu.avx2, flags.find(" avx2 ") != std::string::npos);
  EXPECT_EQ(cpu.avx512f, flags.find(" avx512f ") != std::string::npos);
  EXPECT_EQ(cpu.avx512bw, flags.find(" avx512bw ") != std::string::npos);
  EXPECT_EQ(cpu.avx512_bf16, flags.find(" avx512_bf16 ") != std::string::npos);
  EXPECT_EQ(cpu.amx_bf16, flags.find(" amx_bf16 ") != std::string::npos);
  EXPECT_EQ(cpu.MissingForBf16().empty(), cpu.native_bf16());
}

TEST(CpuFeaturesTest, TheEnvironmentHidesFeatures) {
  setenv("SOFTWIRE_CPU_FEATURES_OFF", "avx512_bf16,amx_bf16", 1);
  const CpuFeatures cpu = DetectCpuFeatures();
  unsetenv("SOFTWIRE_CPU_FEATURES_OFF");
  EXPECT_FALSE(cpu.native_bf16());
  EXPECT_EQ(cpu.MissingForBf16(), "avx512_bf16 (or amx_bf16)");
  EXPECT_EQ(cpu.avx2, DetectCpuFeatures().avx2);  // The others stay.
}

}  // namespace
}  // namespace softwire
