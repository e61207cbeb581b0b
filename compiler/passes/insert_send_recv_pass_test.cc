// insert_send_recv on compiled plans: copies across nodes become send/recv pairs joined by a
// wire register on the receiving device, priced by the link between the nodes; plans on one
// node keep their copies.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "compiler/compiler.h"
#include "compiler/testing/compiler_test_util.h"
#include "placement/cluster_spec.h"

namespace softwire {
namespace compiler {
namespace {

const char kJob[] = "tests/compiler/jobs/mlp.pbtxt";

proto::Plan CompileMlp(const std::string& cluster, int dp, int pp) {
  StatusOr<JobFile> file = ParseJobFile(kJob);
  CHECK(file.ok()) << file.status();
  CompileOptions options;
  options.steps = 2;
  StatusOr<proto::Cluster> parsed = placement::ParseClusterShorthand(cluster, 2);
  CHECK(parsed.ok()) << parsed.status();
  options.cluster = *parsed;
  options.parallel.set_data_parallel(dp);
  options.parallel.set_pipeline_stages(pp);
  StatusOr<proto::Plan> plan = CompileJob(*file, options);
  CHECK(plan.ok()) << plan.status();
  return std::move(plan).value();
}

const std::string& NodeOf(const proto::Plan& plan, int64_t device) {
  return plan.device(static_cast<int>(device)).node();
}

int CountKind(const proto::Plan& plan, proto::ActorKind kind) {
  int count = 0;
  for (const proto::ActorDef& actor : plan.actor()) count += actor.kind() == kind;
  return count;
}

void ExpectPairsAcrossEveryNodeEdge(const proto::Plan& plan) {
  for (const proto::ActorDef& actor : plan.actor()) {
    for (int64_t input : actor.input_register()) {
      const proto::RegisterDef& reg = plan.register_def(static_cast<int>(input));
      if (actor.kind() == proto::ACTOR_KIND_COPY) {
        EXPECT_EQ(NodeOf(plan, reg.device()), NodeOf(plan, actor.device()))
            << actor.name() << " copies across nodes";
      }
    }
    if (actor.kind() != proto::ACTOR_KIND_SEND) continue;
    ASSERT_EQ(actor.output_register_size(), 1) << actor.name();
    const proto::RegisterDef& wire = plan.register_def(static_cast<int>(actor.output_register(0)));
    EXPECT_NE(NodeOf(plan, wire.device()), NodeOf(plan, actor.device())) << actor.name();
    EXPECT_EQ(actor.queue(), 1) << actor.name();
    EXPECT_EQ(actor.name().rfind("send:", 0), 0u) << actor.name();
    EXPECT_EQ(wire.name(), "wire:" + actor.name().substr(5));
    ASSERT_EQ(wire.consumer_size(), 1) << wire.name();
    const proto::ActorDef& recv = plan.actor(static_cast<int>(wire.consumer(0).actor()));
    EXPECT_EQ(recv.kind(), proto::ACTOR_KIND_RECV) << recv.name();
    EXPECT_EQ(recv.device(), wire.device()) << recv.name();
    EXPECT_EQ(recv.name(), "recv:" + actor.name().substr(5));
    // Per piece, small fills get more slots in flight (about 4 MiB, 2 to 8); per-step values
    // (a gradient's ring) keep the 1 slot of every per-step register.
    if (actor.period() == 1) {
      EXPECT_GE(wire.slots(), 2) << wire.name();
      EXPECT_LE(wire.slots(), 8) << wire.name();
      if (wire.bytes_per_slot() <= 512 * 1024) {
        EXPECT_EQ(wire.slots(), 8) << wire.name();
      }
    } else {
      EXPECT_EQ(wire.slots(), 1) << wire.name();
    }
    // As many fills in flight as the wire register has slots (emit_plan).
    EXPECT_EQ(std::max(1, actor.max_in_flight()), wire.slots()) << actor.name();
    // Priced by the inter-node link (20 us latency by default), not as a local copy.
    EXPECT_GE(actor.estimated_seconds(), 20e-6) << actor.name();
  }
}

TEST(InsertSendRecv, TurnsEveryCopyBetweenPipelineStagesOnTwoNodesIntoASendRecvPair) {
  const proto::Plan plan = CompileMlp("2x1cpu", 1, 2);
  EXPECT_GT(CountKind(plan, proto::ACTOR_KIND_SEND), 0);
  EXPECT_EQ(CountKind(plan, proto::ACTOR_KIND_SEND), CountKind(plan, proto::ACTOR_KIND_RECV));
  EXPECT_EQ(CountKind(plan, proto::ACTOR_KIND_COPY), 0);
  ExpectPairsAcrossEveryNodeEdge(plan);
}

TEST(InsertSendRecv, TurnsTheGradientExchangeOfDataParallelismOnTwoNodesIntoPairs) {
  const proto::Plan plan = CompileMlp("2x1cpu", 2, 1);
  EXPECT_GT(CountKind(plan, proto::ACTOR_KIND_SEND), 0);
  EXPECT_EQ(CountKind(plan, proto::ACTOR_KIND_SEND), CountKind(plan, proto::ACTOR_KIND_RECV));
  ExpectPairsAcrossEveryNodeEdge(plan);
}

TEST(InsertSendRecv, LeavesPlansOnOneNodeWithTheirCopies) {
  const proto::Plan plan = CompileMlp("2cpu", 1, 2);
  EXPECT_GT(CountKind(plan, proto::ACTOR_KIND_COPY), 0);
  EXPECT_EQ(CountKind(plan, proto::ACTOR_KIND_SEND), 0);
  EXPECT_EQ(CountKind(plan, proto::ACTOR_KIND_RECV), 0);
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
