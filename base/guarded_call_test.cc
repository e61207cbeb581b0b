// A throwing callee becomes an Internal status naming it; a returning one passes through.
#include "base/guarded_call.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace softwire {
namespace {

TEST(GuardedCallTest, PassesTheCalleesStatusThrough) {
  EXPECT_TRUE(GuardedCall("kernel", [] { return Status::Ok(); }).ok());
  EXPECT_EQ(GuardedCall("kernel", [] { return InvalidArgumentError("bad"); }).code(),
            StatusCode::kInvalidArgument);
}

TEST(GuardedCallTest, TurnsAnExceptionIntoAnInternalStatusNamingTheCallee) {
  Status status = GuardedCall("kernel", []() -> Status { throw std::runtime_error("boom"); });
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_EQ(status.message(), "kernel threw: boom");
  status = GuardedCall("kernel", []() -> Status { throw 42; });
  EXPECT_EQ(status.message(), "kernel threw an exception");
}

}  // namespace
}  // namespace softwire
