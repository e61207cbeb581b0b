// The web view's access rules (web_access.h), request by request.
#include "service/web/web_access.h"

#include <gtest/gtest.h>

namespace softwire {
namespace service {
namespace {

AccessRequest Get(const std::string& path, const std::string& host = "127.0.0.1:8080") {
  return {path, "GET", host, "", ""};
}

TEST(WebAccessTest, LoopbackListenAddressesAreRecognized) {
  EXPECT_TRUE(IsLoopbackListenAddress("127.0.0.1:0"));
  EXPECT_TRUE(IsLoopbackListenAddress("localhost:8080"));
  EXPECT_TRUE(IsLoopbackListenAddress("[::1]:80"));
  EXPECT_FALSE(IsLoopbackListenAddress("0.0.0.0:8080"));
  EXPECT_FALSE(IsLoopbackListenAddress("10.1.2.3:8080"));
  EXPECT_FALSE(IsLoopbackListenAddress("127.0.0.1"));
}

TEST(WebAccessTest, HostHeadersNamingLoopbackPass) {
  EXPECT_TRUE(IsLoopbackHostHeader("127.0.0.1:8080"));
  EXPECT_TRUE(IsLoopbackHostHeader("localhost"));
  EXPECT_TRUE(IsLoopbackHostHeader("[::1]:80"));
  EXPECT_TRUE(IsLoopbackHostHeader("[::1]"));
  EXPECT_FALSE(IsLoopbackHostHeader("evil.example:8080"));
  EXPECT_FALSE(IsLoopbackHostHeader("127.0.0.1.evil.example"));
  EXPECT_FALSE(IsLoopbackHostHeader(""));
}

TEST(WebAccessTest, WithoutATokenOnlyLoopbackHostsAreServed) {
  EXPECT_EQ(DecideAccess(Get("/api/jobs"), "").http_status, 200);
  EXPECT_EQ(DecideAccess(Get("/"), "").http_status, 200);
  EXPECT_EQ(DecideAccess(Get("/api/jobs", "rebound.example:8080"), "").http_status, 403);
  EXPECT_EQ(DecideAccess(Get("/", "rebound.example:8080"), "").http_status, 403);
}

TEST(WebAccessTest, WithATokenEveryApiRequestNeedsIt) {
  const std::string token = "s3cret";
  EXPECT_EQ(DecideAccess(Get("/api/jobs", "10.0.0.5:8443"), token).http_status, 401);
  AccessRequest wrong = Get("/api/jobs", "10.0.0.5:8443");
  wrong.authorization = "Bearer s3creT";
  EXPECT_EQ(DecideAccess(wrong, token).http_status, 401);
  AccessRequest longer = wrong;
  longer.authorization = "Bearer s3cret2";
  EXPECT_EQ(DecideAccess(longer, token).http_status, 401);
  AccessRequest right = wrong;
  right.authorization = "Bearer s3cret";
  EXPECT_EQ(DecideAccess(right, token).http_status, 200);
  // The pages themselves load without it, to ask for it.
  EXPECT_EQ(DecideAccess(Get("/index.html", "10.0.0.5:8443"), token).http_status, 200);
}

TEST(WebAccessTest, ChangesNeedTheRequestHeader) {
  AccessRequest post = Get("/api/jobs/job-1/cancel");
  post.method = "POST";
  const AccessDecision refused = DecideAccess(post, "");
  EXPECT_EQ(refused.http_status, 403);
  EXPECT_NE(refused.message.find(kRequestHeader), std::string::npos) << refused.message;
  post.request_mark = "1";
  EXPECT_EQ(DecideAccess(post, "").http_status, 200);
}

}  // namespace
}  // namespace service
}  // namespace softwire
