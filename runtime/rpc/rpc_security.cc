#include "runtime/rpc/rpc_security.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>

namespace softwire {
namespace rpc {
namespace {

constexpr char kAuthorization[] = "authorization";
constexpr char kBearer[] = "Bearer ";

// Compares every byte of the longer of the two, so the time taken says nothing about where a
// guessed token first differs.
bool EqualInConstantTime(const std::string& a, const std::string& b) {
  unsigned char difference = a.size() == b.size() ? 0 : 1;
  const size_t length = std::max(a.size(), b.size());
  for (size_t i = 0; i < length; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    difference |= static_cast<unsigned char>(x ^ y);
  }
  return difference == 0;
}

}  // namespace

std::shared_ptr<grpc::Channel> CreateClientChannel(const std::string& address,
                                                   const ClientSecurity& security,
                                                   int max_receive_bytes) {
  grpc::ChannelArguments arguments;
  if (max_receive_bytes > 0) arguments.SetMaxReceiveMessageSize(max_receive_bytes);
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (security.tls) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = security.tls_root_certs;
    credentials = grpc::SslCredentials(options);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  return grpc::CreateCustomChannel(address, credentials, arguments);
}

void AttachToken(const ClientSecurity& security, grpc::ClientContext* context) {
  if (!security.token.empty()) context->AddMetadata(kAuthorization, kBearer + security.token);
}

grpc::Status CheckBearerToken(const grpc::ServerContext& context, const std::string& token) {
  if (token.empty()) return grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  auto found = metadata.find(kAuthorization);
  if (found == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "this server needs a token: send metadata 'authorization: Bearer TOKEN' "
                        "(softwire: --token-file FILE)");
  }
  const std::string value(found->second.data(), found->second.size());
  const std::string bearer = kBearer;
  if (value.rfind(bearer, 0) != 0 || !EqualInConstantTime(value.substr(bearer.size()), token)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "the call's token is not this server's");
  }
  return grpc::Status::OK;
}

}  // namespace rpc
}  // namespace softwire
