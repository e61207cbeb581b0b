// WebServer: the web view of `softwire serve --http ADDR` (docs/WEB.md): the pages (jobs, job,
// timeline, devices; HTML, JS and CSS compiled into the binary, nothing fetched from elsewhere)
// and the JSON and server-sent-event endpoints under /api/ they read, over the same JobManager
// as the gRPC JobServer, in the same process.
//
//   WebServerOptions options;
//   options.address = "127.0.0.1:0";  // Port 0: a free one.
//   StatusOr<std::unique_ptr<WebServer>> web = WebServer::Start(jobs.get(), options);
//   std::printf("web view on %s\n", (*web)->url().c_str());
//   ...; web->reset();  // Then the JobManager may go.
//
// Security (web_access.h): the gRPC side's rules. Plaintext on loopback addresses only; any
// other address needs TLS (certificate and key, PEM) and a token, else Start refuses it. With a
// token every /api/ request must carry "Authorization: Bearer TOKEN" (401 otherwise); the
// pages ask for it once and keep it in the tab's sessionStorage.
//
// Limits: at most `max_streams` open feeds at once (503 past it; each holds a thread); a job
// form of at most the JobManager's job and upload limits plus 1 MiB (413 past it).
//
// Ownership and threading: borrows the JobManager, which must outlive it. Requests run on a
// pool of the server's own threads (named sw:web). The destructor ends every feed within 200 ms
// and returns once every request has ended and the background timeline build, if one runs
// (api_routes.h), is done: seconds for a trace of 100,000 firings.
#ifndef SOFTWIRE_SERVICE_WEB_WEB_SERVER_H_
#define SOFTWIRE_SERVICE_WEB_WEB_SERVER_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "base/status.h"
#include "service/job_manager.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace softwire {
namespace service {

class ApiRoutes;

struct WebServerOptions {
  // "HOST:PORT"; port 0 picks a free port.
  std::string address = "127.0.0.1:7071";
  // PEM certificate chain and private key: HTTPS when both are set (one alone is an error).
  std::string tls_certificate;
  std::string tls_private_key;
  // The token every /api/ request must carry; empty: none (loopback only).
  std::string token;
  // Serve the pages from this folder instead of the compiled-in copies (editing them without a
  // rebuild); empty: the compiled-in ones.
  std::string assets_directory;
  // Feeds open at once; each holds one of the server's threads.
  int max_streams = 32;
};

class WebServer {
 public:
  // Listens on `options.address`. InvalidArgument for a non-loopback address without TLS and a
  // token, half a TLS setting, or a certificate or key that does not parse; Unavailable when it
  // cannot listen there (the port is taken).
  static StatusOr<std::unique_ptr<WebServer>> Start(JobManager* jobs, WebServerOptions options);
  ~WebServer();
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  // "127.0.0.1:40123": the address with the port actually bound.
  const std::string& address() const { return address_; }
  int port() const { return port_; }
  // "http://127.0.0.1:40123/" (https with TLS).
  std::string url() const;

 private:
  WebServer() = default;

  bool tls_ = false;
  std::atomic<bool> stopping_{false};
  std::unique_ptr<ApiRoutes> routes_;
  std::unique_ptr<httplib::Server> server_;
  std::thread listener_;
  std::string address_;
  int port_ = 0;
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_WEB_WEB_SERVER_H_
