// RandomPlanMaker: random valid plans for the protocol's randomized tests.
//
// Per-piece actors form a DAG and may also read per-step values that depend only on variables
// (never on the current step's pieces); accumulated gradients go only to update actors, which
// close each variable's cycle. So no plan can deadlock, whatever the interleaving.
//
//   proto::Plan plan = RandomPlanMaker(seed).Make();
//   RandomizeMaxInFlight(4, seed, &plan);  // compute and copy actors: 1 to 4 in flight
//
// The same seed gives the same plan. Test-only; not thread-safe.
#ifndef SOFTWIRE_ACTORS_TESTING_RANDOM_PLAN_MAKER_H_
#define SOFTWIRE_ACTORS_TESTING_RANDOM_PLAN_MAKER_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "proto/plan.pb.h"

namespace softwire {
namespace actors {
namespace testing {

class RandomPlanMaker {
 public:
  explicit RandomPlanMaker(uint64_t seed) : random_(seed) {}

  proto::Plan Make();

 private:
  int64_t Uniform(int64_t low, int64_t high);
  const std::string& Pick(const std::vector<std::string>& names);
  std::mt19937_64 random_;
};

// Gives each compute and copy actor of `plan` a max_in_flight drawn from 1 .. `max_in_flight`
// (seeded by `seed`); the other kinds stay at 1.
void RandomizeMaxInFlight(int max_in_flight, uint64_t seed, proto::Plan* plan);

// Random in-order queue keys for MarkStreamOrderedEdges, one per actor of `plan` (seeded by
// `seed`), any kind: a quarter of the draws put every actor on queue 0; otherwise each actor
// gets -1 (no queue) with probability 1/3, else queue 0 or 1.
std::vector<int64_t> RandomQueueKeys(const proto::Plan& plan, uint64_t seed);

}  // namespace testing
}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_TESTING_RANDOM_PLAN_MAKER_H_
