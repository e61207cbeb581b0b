// TimedCompletions: the event loop of the protocol's gain tests. A test's launch hook says when
// each firing's completion reaches the host (its queue model's kernel end plus a latency);
// RunToEnd delivers the host's messages, then reports the earliest pending completion (ties in
// launch order), moving simulated time to it, until nothing is pending.
//
//   int64_t now = 0;
//   TimedCompletions completions;
//   options.on_launch = [&](ActorId actor, const Firing& firing) {
//     completions.Add(now + latency, actor, firing.index);
//   };
//   ProtocolTestHost host(actors, options);
//   host.Start();
//   ASSERT_TRUE(completions.RunToEnd(&host, &now).ok());  // `now`: when the last came.
//
// Threading: one thread. Deterministic: no clock, no randomness.
#ifndef SOFTWIRE_ACTORS_TESTING_TIMED_COMPLETIONS_H_
#define SOFTWIRE_ACTORS_TESTING_TIMED_COMPLETIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "actors/actor_description.h"
#include "actors/testing/protocol_test_host.h"
#include "base/status.h"

namespace softwire {
namespace actors {
namespace testing {

class TimedCompletions {
 public:
  // The completion of `actor`'s firing `firing` reaches the host at `at_ns`.
  void Add(int64_t at_ns, ActorId actor, int64_t firing);
  // Runs `host` (started, with complete_immediately off) until every completion was reported
  // and nothing is pending; `*now` follows each report, so it ends at the last. The host's
  // first error, or FailedPrecondition when the actors did not all finish.
  Status RunToEnd(ProtocolTestHost* host, int64_t* now);

 private:
  struct Pending {
    int64_t at_ns = 0;
    int64_t order = 0;  // Launch order, to break ties.
    ActorId actor = -1;
    int64_t firing = 0;
  };
  std::vector<Pending> pending_;
  int64_t added_ = 0;
};

// The lines of a transcript, one per line, for EXPECT_EQ with a readable diff.
std::string JoinLines(const std::vector<std::string>& lines);

}  // namespace testing
}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_TESTING_TIMED_COMPLETIONS_H_
