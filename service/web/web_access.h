// Who may use the web view (docs/WEB.md, "Security"), the same rules as the gRPC side
// (service/rpc/job_server.h): plaintext on loopback only; any other address needs TLS and the
// token. With a token, every /api/ request must carry "Authorization: Bearer TOKEN"; the pages
// themselves (the project's HTML, JS and CSS, no job data) load without it so they can ask for
// it.
//
// Two more checks keep other web sites out of a loopback server that has no token:
//   - the Host header must name a loopback host (a DNS-rebinding page names its own);
//   - requests that change something (POST) must carry "X-Softwire-Request: 1", which a
//     cross-site form cannot send and a cross-site fetch cannot send without a CORS preflight
//     the server never grants.
//
// Threading: pure functions of their arguments.
#ifndef SOFTWIRE_SERVICE_WEB_WEB_ACCESS_H_
#define SOFTWIRE_SERVICE_WEB_WEB_ACCESS_H_

#include <string>

namespace softwire {
namespace service {

// True for "127.0.0.1:PORT" (any 127.x.y.z), "localhost:PORT" and "[::1]:PORT".
bool IsLoopbackListenAddress(const std::string& address);
// True for a Host header naming a loopback host, with or without a port: "127.0.0.1:8080",
// "localhost", "[::1]:80".
bool IsLoopbackHostHeader(const std::string& host);

// The header a state-changing request must carry, and its value.
inline constexpr char kRequestHeader[] = "X-Softwire-Request";

struct AccessRequest {
  std::string path;           // "/api/jobs".
  std::string method;         // "GET", "POST".
  std::string host;           // The Host header.
  std::string authorization;  // The Authorization header.
  std::string request_mark;   // The kRequestHeader header.
};

struct AccessDecision {
  int http_status = 200;  // 200: allowed; 401, 403 otherwise.
  std::string message;    // Why it was refused.
};

// `token`: the server's token, empty for none.
AccessDecision DecideAccess(const AccessRequest& request, const std::string& token);

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_WEB_WEB_ACCESS_H_
