// Who may call a softwire gRPC server, and how a client shows it: TLS and a shared token.
//
// A server that has a token refuses every call of its own services that does not carry the
// metadata "authorization: Bearer TOKEN" (UNAUTHENTICATED); each service method asks
// CheckBearerToken first. A client sends the token on every call (AttachToken) over a channel
// made by CreateClientChannel, with TLS when asked for.
//
//   ClientSecurity security;
//   security.tls = true;
//   security.tls_root_certs = *ReadFile("ca.pem");  // Empty: the system's roots.
//   security.token = "s3cret";
//   std::shared_ptr<grpc::Channel> channel = CreateClientChannel("10.0.0.5:7070", security);
//   grpc::ClientContext context;
//   AttachToken(security, &context);
//
// Threading: free functions over their arguments; thread-safe.
#ifndef SOFTWIRE_RUNTIME_RPC_RPC_SECURITY_H_
#define SOFTWIRE_RUNTIME_RPC_RPC_SECURITY_H_

#include <memory>
#include <string>

// Declared, not included: this header reaches code that includes base/thread_annotations.h,
// whose macro names gRPC's headers (abseil's) define too.
namespace grpc {
class Channel;
class ClientContext;
class ServerContext;
class Status;
}  // namespace grpc

namespace softwire {
namespace rpc {

// How a client reaches a server.
struct ClientSecurity {
  // Speak TLS. Off: plaintext, which servers accept on loopback addresses only.
  bool tls = false;
  // PEM certificates of the authorities that may have signed the server's certificate; empty:
  // the system's roots. Only with `tls`.
  std::string tls_root_certs;
  // Sent on every call as "authorization: Bearer TOKEN"; empty: none.
  std::string token;
};

// A channel to `address`, with TLS when `security.tls`. `max_receive_bytes` > 0 raises the
// largest message the client accepts (gRPC's default is 4 MiB).
std::shared_ptr<grpc::Channel> CreateClientChannel(const std::string& address,
                                                   const ClientSecurity& security,
                                                   int max_receive_bytes = 0);

// Adds the token's metadata to `context` (nothing when there is no token).
void AttachToken(const ClientSecurity& security, grpc::ClientContext* context);

// OK when `token` is empty or the call carries "authorization: Bearer <token>";
// UNAUTHENTICATED, saying what is missing, otherwise. The comparison takes the same time
// wherever the tokens differ.
grpc::Status CheckBearerToken(const grpc::ServerContext& context, const std::string& token);

}  // namespace rpc
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_RPC_RPC_SECURITY_H_
