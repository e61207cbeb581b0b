// A fuzz target without libFuzzer: feeds every file of the folders (or files) named on the
// command line to LLVMFuzzerTestOneInput, in sorted order, and says how many it fed. A crash is
// the test's failure (the process dies); CTest's TIMEOUT bounds a hang.
//
//   fuzz_npy_reader_replay fuzz/corpus/npy_reader fuzz/regressions/npy_reader
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"

namespace {

// Regular files under `path` (itself when it is one), sorted; a missing folder has none.
std::vector<std::filesystem::path> InputsUnder(const std::filesystem::path& path) {
  std::vector<std::filesystem::path> inputs;
  std::error_code error;
  if (std::filesystem::is_regular_file(path, error)) return {path};
  if (!std::filesystem::is_directory(path, error)) return inputs;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(path, error)) {
    if (entry.is_regular_file() && entry.path().filename() != "README.md") {
      inputs.push_back(entry.path());
    }
  }
  std::sort(inputs.begin(), inputs.end());
  return inputs;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " FOLDER_OR_FILE...\n";
    return 2;
  }
  int fed = 0;
  for (int i = 1; i < argc; ++i) {
    for (const std::filesystem::path& input : InputsUnder(argv[i])) {
      std::ifstream file(input, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
      if (!file.good() && !file.eof()) {
        std::cerr << "cannot read " << input.string() << "\n";
        return 1;
      }
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++fed;
    }
  }
  std::cout << "replayed " << fed << " input(s)\n";
  return fed > 0 ? 0 : 1;
}
