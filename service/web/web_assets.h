// The web view's pages, scripts and styles (service/web/assets/), compiled into the binary by
// cmake/EmbedFiles.cmake so `softwire serve --http` needs no file beside it and nothing from
// the internet.
//
// Threading: immutable data.
#ifndef SOFTWIRE_SERVICE_WEB_WEB_ASSETS_H_
#define SOFTWIRE_SERVICE_WEB_WEB_ASSETS_H_

#include <string>

namespace softwire {
namespace service {

struct WebAsset {
  const char* path;  // "index.html", "timeline.js": relative to assets/.
  const char* content;
  unsigned long size;
};

// The asset at `path` (relative, no leading '/'), or nullptr.
const WebAsset* FindWebAsset(const std::string& path);

// "text/html; charset=utf-8", "text/javascript; charset=utf-8", "text/css; charset=utf-8",
// "image/svg+xml", else "application/octet-stream".
const char* ContentTypeOf(const std::string& path);

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_WEB_WEB_ASSETS_H_
