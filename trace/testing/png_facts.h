// What a test needs to know of a PNG to call it a picture: its size and its colours. Reads
// 8-bit RGB and RGBA, non-interlaced (what chromium and rsvg-convert write), undoing each row's
// filter. Header-only; links zlib.
#ifndef SOFTWIRE_TRACE_TESTING_PNG_FACTS_H_
#define SOFTWIRE_TRACE_TESTING_PNG_FACTS_H_

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace softwire {
namespace trace {
namespace testing {

struct PngFacts {
  std::string problem;  // "" when the file is a PNG this can read; else what is wrong.
  uint32_t width = 0;
  uint32_t height = 0;
  std::map<uint32_t, int64_t> colours;  // 0xRRGGBB -> pixels.
};

inline uint32_t BigEndian32(const std::string& bytes, size_t at) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 2])) << 8) |
         static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 3]));
}

inline PngFacts ReadPngFacts(const std::string& path) {
  PngFacts facts;
  std::ifstream file(path, std::ios::binary);
  const std::string data((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (data.size() < 33 || data.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) {
    facts.problem = path + ": not a PNG";
    return facts;
  }
  std::string compressed;
  int depth = 0;
  int colour_type = 0;
  int interlace = 0;
  for (size_t at = 8; at + 12 <= data.size();) {
    const uint32_t length = BigEndian32(data, at);
    const std::string kind = data.substr(at + 4, 4);
    if (at + 12 + length > data.size()) break;
    if (kind == "IHDR") {
      facts.width = BigEndian32(data, at + 8);
      facts.height = BigEndian32(data, at + 12);
      depth = static_cast<uint8_t>(data[at + 16]);
      colour_type = static_cast<uint8_t>(data[at + 17]);
      interlace = static_cast<uint8_t>(data[at + 20]);
    } else if (kind == "IDAT") {
      compressed += data.substr(at + 8, length);
    }
    at += 12 + length;
  }
  if (depth != 8 || (colour_type != 2 && colour_type != 6) || interlace != 0) {
    facts.problem = path + ": not an 8-bit non-interlaced RGB(A) PNG";
    return facts;
  }
  const size_t channels = colour_type == 2 ? 3 : 4;
  const size_t stride = facts.width * channels;
  std::vector<uint8_t> raw((stride + 1) * facts.height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(compressed.data()),
                 compressed.size()) != Z_OK ||
      raw_size != raw.size()) {
    facts.problem = path + ": its image data does not inflate to width x height";
    return facts;
  }
  std::vector<uint8_t> previous(stride, 0);
  std::vector<uint8_t> line(stride);
  for (uint32_t row = 0; row < facts.height; ++row) {
    const uint8_t filter = raw[row * (stride + 1)];
    for (size_t i = 0; i < stride; ++i) {
      const int left = i >= channels ? line[i - channels] : 0;
      const int up = previous[i];
      const int corner = i >= channels ? previous[i - channels] : 0;
      int predicted = 0;
      if (filter == 1) predicted = left;
      if (filter == 2) predicted = up;
      if (filter == 3) predicted = (left + up) / 2;
      if (filter == 4) {
        const int estimate = left + up - corner;
        const int to_left = std::abs(estimate - left);
        const int to_up = std::abs(estimate - up);
        const int to_corner = std::abs(estimate - corner);
        predicted = to_left <= to_up && to_left <= to_corner ? left
                    : to_up <= to_corner                     ? up
                                                             : corner;
      }
      line[i] = static_cast<uint8_t>(raw[row * (stride + 1) + 1 + i] + predicted);
    }
    for (size_t i = 0; i < stride; i += channels) {
      ++facts.colours[(static_cast<uint32_t>(line[i]) << 16) |
                      (static_cast<uint32_t>(line[i + 1]) << 8) | line[i + 2]];
    }
    previous = line;
  }
  return facts;
}

}  // namespace testing
}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_TESTING_PNG_FACTS_H_
