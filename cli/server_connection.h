// How the client commands (`softwire submit`, `jobs`, `watch`, `cancel`, `fetch`, `diagnose`)
// reach a `softwire serve`: the flags --to, --token-file and --tls-ca, and the JobClient they
// make.
//
//   ServerFlags server;
//   AddServerFlags(&parser, &server);
//   ... parse ...
//   StatusOr<service::JobClientOptions> options = ClientOptionsFor(server);
//   service::JobClient client(*options);
//
// --to defaults to $SOFTWIRE_SERVER, else 127.0.0.1:7070. TLS is on with --tls-ca, and for
// every address that is not loopback (servers listen wider only with TLS), then checked
// against the system's roots unless --tls-ca names the authority.
#ifndef SOFTWIRE_CLI_SERVER_CONNECTION_H_
#define SOFTWIRE_CLI_SERVER_CONNECTION_H_

#include <string>

#include "base/status.h"
#include "cli/flag_parser.h"
#include "service/rpc/job_client.h"

namespace softwire {
namespace cli {

struct ServerFlags {
  std::string to;  // Empty: DefaultServerAddress().
  std::string token_file;
  std::string tls_ca;
};

void AddServerFlags(FlagParser* parser, ServerFlags* flags);

// $SOFTWIRE_SERVER when set, else "127.0.0.1:7070".
std::string DefaultServerAddress();

// The address and security the flags say. InvalidArgument naming the flag for a token or CA
// file that cannot be read, or an empty token.
StatusOr<service::JobClientOptions> ClientOptionsFor(const ServerFlags& flags);

// The token in `path`: its text without surrounding whitespace. InvalidArgument when it cannot
// be read or is empty.
StatusOr<std::string> ReadTokenFile(const std::string& path, const std::string& flag);

// `status`'s message without the "CALL to ADDRESS: " prefix JobClient puts before what the
// server said ("SubmitJob", "127.0.0.1:7070"), for messages that must read as `softwire run`
// prints them.
std::string ServerMessage(const Status& status, const std::string& call,
                          const std::string& address);

}  // namespace cli
}  // namespace softwire

#endif  // SOFTWIRE_CLI_SERVER_CONNECTION_H_
