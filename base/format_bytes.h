// Byte counts as people read them, in binary units: "512 B", "4.0 KiB", "1.5 MiB", "2.00 GiB",
// "1.0 TiB". The one formatting of bytes for plan summaries, compiler errors, trace and
// simulation reports and the CLI. Pure; thread-safe.
#ifndef SOFTWIRE_BASE_FORMAT_BYTES_H_
#define SOFTWIRE_BASE_FORMAT_BYTES_H_

#include <cstdint>
#include <string>

namespace softwire {

// Below 1 KiB in bytes; then KiB, MiB (one decimal), GiB (two) or TiB (one).
std::string FormatBytes(int64_t bytes);

}  // namespace softwire

#endif  // SOFTWIRE_BASE_FORMAT_BYTES_H_
