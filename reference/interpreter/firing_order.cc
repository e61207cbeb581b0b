#include "reference/interpreter/firing_order.h"

#include <queue>
#include <string>

#include "plan/labels.h"

namespace softwire {
namespace reference {

StatusOr<std::vector<int64_t>> OrderActors(const proto::Plan& plan) {
  const int actor_count = plan.actor_size();
  std::vector<std::vector<int64_t>> successors(actor_count);
  std::vector<int> predecessors(actor_count, 0);
  auto add_edge = [&](int64_t from, int64_t to) {
    successors[from].push_back(to);
    ++predecessors[to];
  };
  for (const proto::RegisterDef& r : plan.register_def()) {
    int64_t writer = -1;
    for (const proto::RegisterConsumer& consumer : r.consumer()) {
      add_edge(r.producer(), consumer.actor());
      if (consumer.phase() == 1) writer = consumer.actor();
    }
    if (writer < 0) continue;
    for (const proto::RegisterConsumer& consumer : r.consumer()) {
      if (consumer.phase() == 0) add_edge(consumer.actor(), writer);
    }
  }
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<int64_t>> ready;
  for (int64_t a = 0; a < actor_count; ++a) {
    if (predecessors[a] == 0) ready.push(a);
  }
  std::vector<int64_t> order;
  while (!ready.empty()) {
    const int64_t actor = ready.top();
    ready.pop();
    order.push_back(actor);
    for (int64_t next : successors[actor]) {
      if (--predecessors[next] == 0) ready.push(next);
    }
  }
  if (static_cast<int>(order.size()) != actor_count) {
    for (int64_t a = 0; a < actor_count; ++a) {
      if (predecessors[a] > 0) {
        return InvalidArgumentError(plan::ActorLabel(plan.actor(a).name()) +
                                    " lies on a cycle of data edges; the reference interpreter "
                                    "needs an acyclic plan (variables close cycles only through "
                                    "their phase-1 writer)");
      }
    }
  }
  return order;
}

}  // namespace reference
}  // namespace softwire
