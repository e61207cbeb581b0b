#include "base/status.h"

#include <gtest/gtest.h>

namespace softwire {
namespace {

StatusOr<int> Half(int value) {
  if (value % 2 != 0) return InvalidArgumentError(std::to_string(value) + " is odd");
  return value / 2;
}

Status HalveTwice(int value, int* result) {
  SOFTWIRE_ASSIGN_OR_RETURN(int half, Half(value));
  SOFTWIRE_ASSIGN_OR_RETURN(*result, Half(half));
  return Status::Ok();
}

TEST(StatusTest, DefaultStatusIsOk) {
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status().ToString(), "OK");
}

TEST(StatusTest, ContextIsPrependedToTheMessage) {
  Status status = NotFoundError("no such tensor 'x'").WithContext("op 'fc1'");
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "op 'fc1': no such tensor 'x'");
  EXPECT_EQ(status.ToString(), "NOT_FOUND: op 'fc1': no such tensor 'x'");
}

TEST(StatusTest, AssignOrReturnForwardsTheFirstFailure) {
  int result = 0;
  EXPECT_TRUE(HalveTwice(8, &result).ok());
  EXPECT_EQ(result, 2);
  Status failure = HalveTwice(6, &result);
  EXPECT_EQ(failure.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(failure.message(), "3 is odd");
}

}  // namespace
}  // namespace softwire
