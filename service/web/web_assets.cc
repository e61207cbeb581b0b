#include "service/web/web_assets.h"

namespace softwire {
namespace service {

// web_assets_data.cc, generated from assets/ at build time (cmake/EmbedFiles.cmake).
extern const WebAsset kWebAssets[];
extern const int kWebAssetCount;

const WebAsset* FindWebAsset(const std::string& path) {
  for (int i = 0; i < kWebAssetCount; ++i) {
    if (path == kWebAssets[i].path) return &kWebAssets[i];
  }
  return nullptr;
}

const char* ContentTypeOf(const std::string& path) {
  auto ends_with = [&](const std::string& suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".html")) return "text/html; charset=utf-8";
  if (ends_with(".js")) return "text/javascript; charset=utf-8";
  if (ends_with(".css")) return "text/css; charset=utf-8";
  if (ends_with(".svg")) return "image/svg+xml";
  if (ends_with(".json")) return "application/json";
  return "application/octet-stream";
}

}  // namespace service
}  // namespace softwire
