#include "runtime/rpc/rpc_status.h"

namespace softwire {
namespace rpc {

grpc::Status ToGrpcStatus(const Status& status) {
  grpc::StatusCode code = grpc::StatusCode::UNKNOWN;
  switch (status.code()) {
    case StatusCode::kOk:
      return grpc::Status::OK;
    case StatusCode::kInvalidArgument:
      code = grpc::StatusCode::INVALID_ARGUMENT;
      break;
    case StatusCode::kNotFound:
      code = grpc::StatusCode::NOT_FOUND;
      break;
    case StatusCode::kFailedPrecondition:
      code = grpc::StatusCode::FAILED_PRECONDITION;
      break;
    case StatusCode::kResourceExhausted:
      code = grpc::StatusCode::RESOURCE_EXHAUSTED;
      break;
    case StatusCode::kUnavailable:
      code = grpc::StatusCode::UNAVAILABLE;
      break;
    case StatusCode::kDeadlineExceeded:
      code = grpc::StatusCode::DEADLINE_EXCEEDED;
      break;
    case StatusCode::kCancelled:
      code = grpc::StatusCode::CANCELLED;
      break;
    case StatusCode::kAborted:
      code = grpc::StatusCode::ABORTED;
      break;
    case StatusCode::kUnimplemented:
      code = grpc::StatusCode::UNIMPLEMENTED;
      break;
    case StatusCode::kInternal:
      code = grpc::StatusCode::INTERNAL;
      break;
    case StatusCode::kDataLoss:
      code = grpc::StatusCode::DATA_LOSS;
      break;
  }
  return grpc::Status(code, status.message());
}

Status FromGrpcStatus(const grpc::Status& status, const std::string& what) {
  if (status.ok()) return Status::Ok();
  std::string message = what + ": " + status.error_message();
  switch (status.error_code()) {
    case grpc::StatusCode::INVALID_ARGUMENT:
      return InvalidArgumentError(message);
    case grpc::StatusCode::NOT_FOUND:
      return NotFoundError(message);
    case grpc::StatusCode::FAILED_PRECONDITION:
      return FailedPreconditionError(message);
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return ResourceExhaustedError(message);
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return DeadlineExceededError(message);
    case grpc::StatusCode::CANCELLED:
      return CancelledError(message);
    case grpc::StatusCode::ABORTED:
      return AbortedError(message);
    case grpc::StatusCode::UNIMPLEMENTED:
      return UnimplementedError(message);
    case grpc::StatusCode::DATA_LOSS:
      return DataLossError(message);
    case grpc::StatusCode::UNAVAILABLE:
      return UnavailableError(message);
    default:
      return InternalError(message);
  }
}

bool IsLoopbackAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) return false;
  for (size_t i = colon + 1; i < address.size(); ++i) {
    if (address[i] < '0' || address[i] > '9') return false;
  }
  const std::string host = address.substr(0, colon);
  return host == "localhost" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

}  // namespace rpc
}  // namespace softwire
