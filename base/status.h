// Status and StatusOr: softwire's one recoverable-error type.
//
// Every function that can fail for a reason outside the program (bad input, a missing file, a
// device out of memory, a peer that died) returns Status or StatusOr<T>. Broken invariants are
// CHECK failures instead (glog), with a message. Exceptions are not used. Errors are converted
// to gRPC and CAF errors only at those edges.
//
//   StatusOr<Plan> plan = Compile(job);
//   if (!plan.ok()) return plan.status();
//
// Messages name what is at fault, outermost context first, e.g.
//   "mlp.pbtxt:12: op 'fc1': input 'x2' is not produced by any op, source or variable".
#ifndef SOFTWIRE_BASE_STATUS_H_
#define SOFTWIRE_BASE_STATUS_H_

#include <glog/logging.h>

#include <optional>
#include <ostream>
#include <string>
#include <utility>

namespace softwire {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // Bad input: a job file, a flag, an attribute.
  kNotFound,            // A named file, op, tensor or node does not exist.
  kFailedPrecondition,  // The system is not in a state to do this (e.g. plan would deadlock).
  kResourceExhausted,   // A memory budget or quota is too small.
  kUnavailable,         // A peer or device cannot be reached; may succeed later.
  kDeadlineExceeded,    // A time bound passed.
  kCancelled,           // Stopped on request.
  kAborted,             // Stopped because another part failed.
  kUnimplemented,       // Valid request this build cannot serve (e.g. cuda without CUDA).
  kInternal,            // A bug: an invariant a caller cannot influence was broken.
  kDataLoss,            // A file or message is corrupt or truncated.
};

// Returns "INVALID_ARGUMENT" etc.
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK.
  Status(StatusCode code, std::string message);

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "<context>: <message>". OK stays OK.
  Status WithContext(const std::string& context) const;

  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;

  bool operator==(const Status& other) const {
    return code_ == other.code_ && message_ == other.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

std::ostream& operator<<(std::ostream& stream, const Status& status);

// Shorthands for the common codes.
Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status FailedPreconditionError(std::string message);
Status ResourceExhaustedError(std::string message);
Status UnavailableError(std::string message);
Status DeadlineExceededError(std::string message);
Status CancelledError(std::string message);
Status AbortedError(std::string message);
Status UnimplementedError(std::string message);
Status InternalError(std::string message);
Status DataLossError(std::string message);

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // Implicit on purpose, so `return value;` and `return SomeError(...)` both read naturally.
  StatusOr(const T& value) : value_(value) {}             // NOLINT
  StatusOr(T&& value) : value_(std::move(value)) {}       // NOLINT
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT
    CHECK(!status_.ok()) << "StatusOr constructed from an OK status without a value";
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // The value. CHECK-fails when !ok().
  const T& value() const& {
    CHECK(ok()) << status_;
    return *value_;
  }
  T& value() & {
    CHECK(ok()) << status_;
    return *value_;
  }
  T&& value() && {
    CHECK(ok()) << status_;
    return std::move(*value_);
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace softwire

// The two propagation macros. Use them only to forward a failure unchanged; add context with
// Status::WithContext where the caller knows more.
#define SOFTWIRE_RETURN_IF_ERROR(expression)             \
  do {                                                   \
    ::softwire::Status softwire_status_ = (expression);  \
    if (!softwire_status_.ok()) return softwire_status_; \
  } while (false)

#define SOFTWIRE_STATUS_CONCAT_INNER(a, b) a##b
#define SOFTWIRE_STATUS_CONCAT(a, b) SOFTWIRE_STATUS_CONCAT_INNER(a, b)
#define SOFTWIRE_ASSIGN_OR_RETURN(lhs, expression)                           \
  auto SOFTWIRE_STATUS_CONCAT(softwire_status_or_, __LINE__) = (expression); \
  if (!SOFTWIRE_STATUS_CONCAT(softwire_status_or_, __LINE__).ok())           \
    return SOFTWIRE_STATUS_CONCAT(softwire_status_or_, __LINE__).status();   \
  lhs = std::move(SOFTWIRE_STATUS_CONCAT(softwire_status_or_, __LINE__)).value()

#endif  // SOFTWIRE_BASE_STATUS_H_
