#include "service/web/web_server.h"

#include <httplib.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <chrono>

#include "base/file.h"
#include "base/thread_name.h"
#include "service/web/api_routes.h"
#include "service/web/web_access.h"
#include "service/web/web_assets.h"

namespace softwire {
namespace service {
namespace {

// Threads beside the feeds: for pages, JSON and submissions. httplib gives a connection a
// thread while it lives, so idle keep-alive connections (a browser holds up to six per server)
// are let go after kKeepAliveSeconds.
constexpr int kRequestThreads = 16;
constexpr int kKeepAliveSeconds = 2;
// The name of every thread that serves a request (base/thread_name.h).
constexpr char kWebThreadName[] = "sw:web";

// Loads a PEM certificate chain and key into `context`; false when either does not parse or
// they do not match.
bool UseCertificate(SSL_CTX& context, const std::string& chain, const std::string& key) {
  BIO* chain_bio = BIO_new_mem_buf(chain.data(), static_cast<int>(chain.size()));
  X509* leaf = PEM_read_bio_X509(chain_bio, nullptr, nullptr, nullptr);
  bool ok = leaf != nullptr && SSL_CTX_use_certificate(&context, leaf) == 1;
  X509_free(leaf);
  while (ok) {  // The rest of the chain, if any.
    X509* next = PEM_read_bio_X509(chain_bio, nullptr, nullptr, nullptr);
    if (next == nullptr) break;
    if (SSL_CTX_add_extra_chain_cert(&context, next) != 1) {  // Takes `next` on success.
      X509_free(next);
      ok = false;
    }
  }
  BIO_free(chain_bio);
  BIO* key_bio = BIO_new_mem_buf(key.data(), static_cast<int>(key.size()));
  EVP_PKEY* private_key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  ok = ok && private_key != nullptr && SSL_CTX_use_PrivateKey(&context, private_key) == 1 &&
       SSL_CTX_check_private_key(&context) == 1;
  EVP_PKEY_free(private_key);
  BIO_free(key_bio);
  SSL_CTX_set_min_proto_version(&context, TLS1_2_VERSION);
  return ok;
}

// "HOST:PORT" or "[V6]:PORT" into the host httplib binds and the port.
Status SplitAddress(const std::string& address, std::string* host, int* port) {
  const size_t colon = address.rfind(':');
  const std::string port_text = colon == std::string::npos ? "" : address.substr(colon + 1);
  if (colon == 0 || port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgumentError("--http " + address + ": expected HOST:PORT");
  }
  *port = std::stoi(port_text);
  if (*port > 65535) return InvalidArgumentError("--http " + address + ": no such port");
  *host = address.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  if (*host == "localhost") *host = "127.0.0.1";
  return Status::Ok();
}

void ServeAsset(const WebServerOptions& options, const httplib::Request& request,
                httplib::Response& response) {
  std::string path = request.path == "/" ? "index.html" : request.path.substr(1);
  if (!options.assets_directory.empty()) {
    if (path.find("..") == std::string::npos && path.find('/') == std::string::npos) {
      StatusOr<std::string> content = ReadFile(options.assets_directory + "/" + path);
      if (content.ok()) {
        response.set_content(*content, ContentTypeOf(path));
        return;
      }
    }
  } else if (const WebAsset* asset = FindWebAsset(path)) {
    response.set_content(asset->content, asset->size, ContentTypeOf(path));
    return;
  }
  response.status = 404;
  response.set_content("no page '" + request.path + "' here; the jobs page is /", "text/plain");
}

}  // namespace

StatusOr<std::unique_ptr<WebServer>> WebServer::Start(JobManager* jobs, WebServerOptions options) {
  const bool tls = !options.tls_certificate.empty();
  if (tls != !options.tls_private_key.empty()) {
    return InvalidArgumentError("a TLS certificate and its private key go together");
  }
  if (!IsLoopbackListenAddress(options.address) && (!tls || options.token.empty())) {
    return InvalidArgumentError(
        "--http " + options.address +
        " is not a loopback address: serving the web view there needs TLS and a token "
        "(--tls-cert FILE --tls-key FILE --token-file FILE); without them use 127.0.0.1:PORT");
  }
  if (options.max_streams < 1) return InvalidArgumentError("max_streams must be >= 1");
  std::string host;
  int port = 0;
  SOFTWIRE_RETURN_IF_ERROR(SplitAddress(options.address, &host, &port));

  std::unique_ptr<WebServer> web(new WebServer());
  web->tls_ = tls;
  if (tls) {
    const std::string chain = options.tls_certificate, key = options.tls_private_key;
    auto server = std::make_unique<httplib::SSLServer>(
        [&](SSL_CTX& context) { return UseCertificate(context, chain, key); });
    if (!server->is_valid()) {
      return InvalidArgumentError("the TLS certificate or key does not parse, or they differ");
    }
    web->server_ = std::move(server);
  } else {
    web->server_ = std::make_unique<httplib::Server>();
  }
  httplib::Server& server = *web->server_;
  const int threads = options.max_streams + kRequestThreads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  const JobLimits& limits = jobs->options().limits;
  server.set_payload_max_length(
      static_cast<size_t>(limits.max_job_bytes + limits.max_upload_bytes + (1 << 20)));
  server.set_keep_alive_timeout(kKeepAliveSeconds);

  const std::string token = options.token;
  server.set_pre_routing_handler(
      [token](const httplib::Request& request, httplib::Response& response) {
        // httplib's pool threads say what they are (top -H; bench/web measures their CPU).
        thread_local bool named = false;
        if (!named) NameCurrentThread(kWebThreadName);
        named = true;
        AccessRequest access{request.path, request.method, request.get_header_value("Host"),
                             request.get_header_value("Authorization"),
                             request.get_header_value(kRequestHeader)};
        const AccessDecision decision = DecideAccess(access, token);
        response.set_header("X-Content-Type-Options", "nosniff");
        response.set_header("Referrer-Policy", "no-referrer");
        if (decision.http_status == 200) return httplib::Server::HandlerResponse::Unhandled;
        response.status = decision.http_status;
        response.set_content(
            "{\"error\": \"" + decision.message + "\", \"code\": \"" +
                (decision.http_status == 401 ? "UNAUTHENTICATED" : "PERMISSION_DENIED") + "\"}",
            "application/json");
        return httplib::Server::HandlerResponse::Handled;
      });

  web->routes_ = std::make_unique<ApiRoutes>(jobs, &web->stopping_, options.max_streams);
  web->routes_->Install(&server);
  server.Get(R"(/[A-Za-z0-9_.-]*)",
             [options](const httplib::Request& request, httplib::Response& response) {
               ServeAsset(options, request, response);
             });

  if (port == 0) {
    port = server.bind_to_any_port(host);
    if (port < 0) return UnavailableError("--http " + options.address + ": cannot listen there");
  } else if (!server.bind_to_port(host, port)) {
    return UnavailableError("--http " + options.address +
                            ": cannot listen there (is the port taken?)");
  }
  web->port_ = port;
  const size_t colon = options.address.rfind(':');
  web->address_ = options.address.substr(0, colon + 1) + std::to_string(port);
  web->listener_ = std::thread([&server] { server.listen_after_bind(); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!server.is_running()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return UnavailableError("--http " + options.address + ": the server did not start");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return web;
}

WebServer::~WebServer() {
  stopping_ = true;                         // Feeds end within kStreamPoll...
  if (server_ != nullptr) server_->stop();  // ...and the pool joins them.
  if (listener_.joinable()) listener_.join();
}

std::string WebServer::url() const {
  return (tls_ ? "https://" : "http://") + address_ + "/";
}

}  // namespace service
}  // namespace softwire
