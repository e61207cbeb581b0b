// Byte counts read the same in every report: binary units, one decimal (two for GiB).
#include "base/format_bytes.h"

#include <gtest/gtest.h>

namespace softwire {
namespace {

TEST(FormatBytesTest, PicksTheLargestBinaryUnitBelowTheCount) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(4096), "4.0 KiB");
  EXPECT_EQ(FormatBytes(3 * 512 * 1024), "1.5 MiB");
  EXPECT_EQ(FormatBytes(int64_t{2} << 30), "2.00 GiB");
  EXPECT_EQ(FormatBytes(int64_t{1} << 40), "1.0 TiB");
}

}  // namespace
}  // namespace softwire
