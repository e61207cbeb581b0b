// Status <-> grpc::Status, at the edge where softwire meets gRPC.
#ifndef SOFTWIRE_RUNTIME_RPC_RPC_STATUS_H_
#define SOFTWIRE_RUNTIME_RPC_RPC_STATUS_H_

#include <grpcpp/support/status.h>

#include <string>

#include "base/status.h"

namespace softwire {
namespace rpc {

grpc::Status ToGrpcStatus(const Status& status);
// `what` names the call for the message: "GetWaitStates to 127.0.0.1:5000".
Status FromGrpcStatus(const grpc::Status& status, const std::string& what);

// True for "127.0.0.1:PORT" (any 127.x.y.z), "localhost:PORT" and "[::1]:PORT".
bool IsLoopbackAddress(const std::string& address);

}  // namespace rpc
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_RPC_RPC_STATUS_H_
