#include "cli/server_connection.h"

#include <cstdlib>

#include "base/file.h"
#include "runtime/rpc/rpc_status.h"

namespace softwire {
namespace cli {

void AddServerFlags(FlagParser* parser, ServerFlags* flags) {
  parser->AddString("to", &flags->to, "ADDR",
                    "the server (softwire serve) to ask (default: $SOFTWIRE_SERVER, else "
                    "127.0.0.1:7070)");
  parser->AddString("token-file", &flags->token_file, "FILE",
                    "send the token in FILE with every call (the server's --token-file)");
  parser->AddString("tls-ca", &flags->tls_ca, "FILE",
                    "speak TLS, trusting the authority whose certificate (PEM) is in FILE "
                    "(default: TLS with the system's roots for addresses other than loopback)");
}

std::string DefaultServerAddress() {
  const char* from_environment = std::getenv("SOFTWIRE_SERVER");
  if (from_environment != nullptr && *from_environment != '\0') return from_environment;
  return "127.0.0.1:7070";
}

StatusOr<std::string> ReadTokenFile(const std::string& path, const std::string& flag) {
  StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return InvalidArgumentError(flag + ": cannot read '" + path + "'");
  const std::string whitespace = " \t\r\n";
  const size_t begin = text->find_first_not_of(whitespace);
  if (begin == std::string::npos) return InvalidArgumentError(flag + ": '" + path + "' is empty");
  const size_t end = text->find_last_not_of(whitespace);
  return text->substr(begin, end - begin + 1);
}

StatusOr<service::JobClientOptions> ClientOptionsFor(const ServerFlags& flags) {
  service::JobClientOptions options;
  options.address = flags.to.empty() ? DefaultServerAddress() : flags.to;
  if (!flags.token_file.empty()) {
    SOFTWIRE_ASSIGN_OR_RETURN(options.security.token,
                              ReadTokenFile(flags.token_file, "--token-file"));
  }
  if (!flags.tls_ca.empty()) {
    StatusOr<std::string> pem = ReadFile(flags.tls_ca);
    if (!pem.ok()) return InvalidArgumentError("--tls-ca: cannot read '" + flags.tls_ca + "'");
    options.security.tls = true;
    options.security.tls_root_certs = *pem;
  }
  if (!rpc::IsLoopbackAddress(options.address)) options.security.tls = true;
  return options;
}

std::string ServerMessage(const Status& status, const std::string& call,
                          const std::string& address) {
  const std::string prefix = call + " to " + address + ": ";
  const std::string& message = status.message();
  return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
}

}  // namespace cli
}  // namespace softwire
