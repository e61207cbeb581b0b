#include "base/bfloat16.h"

#include <cmath>
#include <limits>

namespace softwire {

double RoundToBFloat16(double value) {
  if (!std::isfinite(value) || value == 0) return value;
  int exponent = 0;
  std::frexp(value, &exponent);  // |value| = m 2^exponent, m in [0.5, 1).
  // 8 significant bits: the spacing is 2^(exponent - 8), but never below the subnormal
  // spacing 2^-133 (float32's smallest normal exponent -126, less 7 fraction bits).
  const int quantum_exponent = exponent - 1 < -126 ? -133 : exponent - 8;
  // nearbyint rounds ties to even in the default rounding mode; scaling by a power of two is
  // exact.
  const double rounded =
      std::ldexp(std::nearbyint(std::ldexp(value, -quantum_exponent)), quantum_exponent);
  constexpr double kLargest = 3.3895313892515355e38;  // (2 - 2^-7) 2^127.
  if (std::fabs(rounded) > kLargest) {
    return std::copysign(std::numeric_limits<double>::infinity(), value);
  }
  return rounded;
}

}  // namespace softwire
