// GuardedCall: runs a function that returns Status so that an exception it throws anyway
// (std::bad_alloc, a library's throw) becomes an Internal status instead of unwinding through
// the caller. The one place the engines turn a throwing kernel run into a Status:
//
//   Status status = GuardedCall("kernel", [&] { return kernel->Run(context); });
//   // A throw gives Internal "kernel threw: <what()>" ("kernel threw an exception" when the
//   // thrown object is no std::exception).
//
// Threading: runs `function` on the calling thread. Header-only.
#ifndef SOFTWIRE_BASE_GUARDED_CALL_H_
#define SOFTWIRE_BASE_GUARDED_CALL_H_

#include <exception>
#include <string>
#include <utility>

#include "base/status.h"

namespace softwire {

// `what` names the callee in the message.
template <typename Function>
Status GuardedCall(const char* what, Function&& function) {
  try {
    return std::forward<Function>(function)();
  } catch (const std::exception& exception) {
    return InternalError(std::string(what) + " threw: " + exception.what());
  } catch (...) {
    return InternalError(std::string(what) + " threw an exception");
  }
}

}  // namespace softwire

#endif  // SOFTWIRE_BASE_GUARDED_CALL_H_
