#include "service/web/web_access.h"

namespace softwire {
namespace service {
namespace {

// "127.a.b.c" with numbers only: "127.0.0.1.evil.example" is a name, not a loopback address.
bool IsLoopbackIpv4(const std::string& host) {
  if (host.rfind("127.", 0) != 0) return false;
  int dots = 0;
  for (char c : host) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return dots == 3 && host.back() != '.' && host.find("..") == std::string::npos;
}

bool IsLoopbackHostName(const std::string& host) {
  return host == "localhost" || host == "[::1]" || IsLoopbackIpv4(host);
}

bool AllDigits(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// The same time wherever the strings differ (their lengths may leak, not their contents).
bool SameToken(const std::string& given, const std::string& expected) {
  unsigned char difference = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    difference |= static_cast<unsigned char>(expected[i] ^ (i < given.size() ? given[i] : 0));
  }
  return difference == 0;
}

}  // namespace

bool IsLoopbackListenAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || !AllDigits(address.substr(colon + 1))) return false;
  return IsLoopbackHostName(address.substr(0, colon));
}

bool IsLoopbackHostHeader(const std::string& host) {
  if (host.empty()) return false;
  std::string name = host;
  const size_t colon = host.rfind(':');
  if (colon != std::string::npos && host.back() != ']' && AllDigits(host.substr(colon + 1))) {
    name = host.substr(0, colon);
  }
  return IsLoopbackHostName(name);
}

AccessDecision DecideAccess(const AccessRequest& request, const std::string& token) {
  const bool api = request.path.rfind("/api/", 0) == 0;
  if (token.empty() && !IsLoopbackHostHeader(request.host)) {
    return {403, "this server answers only requests to a loopback host (Host: " + request.host +
                     "); it has no token"};
  }
  if (!api) return {};
  if (!token.empty()) {
    const std::string prefix = "Bearer ";
    if (request.authorization.rfind(prefix, 0) != 0) {
      return {401, "missing 'Authorization: Bearer TOKEN': this server needs its token"};
    }
    if (!SameToken(request.authorization.substr(prefix.size()), token)) {
      return {401, "the token is not this server's"};
    }
  }
  if (request.method != "GET" && request.method != "HEAD" && request.request_mark != "1") {
    return {403, std::string("a ") + request.method + " needs the header '" + kRequestHeader +
                     ": 1' (the web view's pages send it)"};
  }
  return {};
}

}  // namespace service
}  // namespace softwire
