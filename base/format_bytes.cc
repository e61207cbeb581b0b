#include "base/format_bytes.h"

#include <cstdio>

namespace softwire {

std::string FormatBytes(int64_t bytes) {
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), unit == 2 ? "%.2f %s" : "%.1f %s", value, units[unit]);
  return text;
}

}  // namespace softwire
