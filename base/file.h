// Whole-file reads and crash-safe writes.
#ifndef SOFTWIRE_BASE_FILE_H_
#define SOFTWIRE_BASE_FILE_H_

#include <string>

#include "base/status.h"

namespace softwire {

// Reads the whole file. NotFound names the path when it cannot be opened.
StatusOr<std::string> ReadFile(const std::string& path);

// Writes `contents` to a temporary file beside `path`, then renames it over `path`, so a
// reader never sees a half-written file and a failure leaves any old file intact.
Status WriteFileAtomically(const std::string& path, const std::string& contents);

// Creates `path` and its parents when missing.
Status MakeDirectories(const std::string& path);

// The directory part of `path` ("." when it has none).
std::string DirectoryOf(const std::string& path);

// `path` when absolute, else `directory/path`.
std::string ResolvePath(const std::string& directory, const std::string& path);

}  // namespace softwire

#endif  // SOFTWIRE_BASE_FILE_H_
