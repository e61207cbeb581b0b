// Protocol violations become errors naming the actor and the register; the wait state says
// what an idle actor waits for; finished needs every firing, every slot back and every
// EndOfStream.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "actors/actor_protocol.h"
#include "actors/testing/protocol_test_host.h"
#include "plan/testing/plan_builder.h"

namespace softwire {
namespace actors {
namespace {

using plan::testing::PlanBuilder;
using ::testing::HasSubstr;
using testing::ProtocolTestHost;

constexpr ActorId kSource = 0;
constexpr ActorId kRelu = 1;
constexpr ActorId kSink = 2;
constexpr RegisterId kX = 0;
constexpr RegisterId kY = 1;

proto::Plan Chain(int64_t pieces, int slots) {
  PlanBuilder plan(pieces, 1);
  plan.AddRegister("x", slots).AddRegister("y", slots);
  plan.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  plan.AddActor({"relu", proto::ACTOR_KIND_COMPUTE, {"x"}, {"y"}});
  plan.AddActor({"sink", proto::ACTOR_KIND_SINK, {"y"}, {}});
  return plan.Build();
}

std::unique_ptr<ProtocolTestHost> StartedChain(int64_t pieces, int slots,
                                               bool complete_immediately = true) {
  ProtocolTestHost::Options options;
  options.complete_immediately = complete_immediately;
  auto host = ProtocolTestHost::Create(Chain(pieces, slots), options);
  EXPECT_TRUE(host.ok()) << host.status();
  host.value()->Start();
  return std::move(host).value();
}

OutgoingMessage ReadyMessage(RegisterId r, int32_t slot, int64_t sequence) {
  OutgoingMessage message;
  message.Set(Ready{r, slot, sequence});
  return message;
}

OutgoingMessage ReleaseMessage(RegisterId r, int32_t slot, int64_t sequence) {
  OutgoingMessage message;
  message.Set(Release{r, slot, sequence});
  return message;
}

OutgoingMessage EndOfStreamMessage(RegisterId r) {
  OutgoingMessage message;
  message.Set(EndOfStream{r});
  return message;
}

TEST(ActorProtocolViolationTest, AReleaseOfASlotNotHeldIsAnErrorNamingActorAndRegister) {
  auto host = StartedChain(2, 1);
  Status status = host->Inject(kSink, kRelu, ReleaseMessage(kY, 0, 0));  // relu sent no y yet.
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("actor 'relu' (1): register 'y' (1)"));
  EXPECT_THAT(status.message(), HasSubstr("of a slot it does not hold: it holds none"));
}

TEST(ActorProtocolViolationTest, ASecondReleaseOfTheSameFillIsAnError) {
  auto host = StartedChain(2, 1);
  ASSERT_TRUE(host->Step().value());  // relu fires on x0 and sends its Release.
  ASSERT_TRUE(host->Step().value());  // The Release reaches source, which fills x1.
  Status status = host->Inject(kRelu, kSource, ReleaseMessage(kX, 0, 0));
  EXPECT_THAT(status.message(), HasSubstr("Release(slot 0, seq 0) from actor 1 of a slot it "
                                          "does not hold: it holds fill 1 in slot 0 first"));
}

TEST(ActorProtocolViolationTest, AReadyOutOfSequenceIsAnError) {
  auto host = StartedChain(3, 2);
  // source sent x0 and x1, both still queued: an x1 arriving first skips x0.
  Status status = host->Inject(kSource, kRelu, ReadyMessage(kX, 1, 1));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("actor 'relu' (1): register 'x' (0): Ready(slot 1, "
                                          "seq 1) out of sequence: expected fill 0"));
}

TEST(ActorProtocolViolationTest, AReadyInTheWrongSlotIsAnError) {
  auto host = StartedChain(3, 2);
  Status status = host->Inject(kSource, kRelu, ReadyMessage(kX, 1, 0));
  EXPECT_THAT(status.message(), HasSubstr("in the wrong slot: fill 0 lies in slot 0"));
}

TEST(ActorProtocolViolationTest, MoreFillsThanSlotsIsAnError) {
  auto host = StartedChain(2, 1, /*complete_immediately=*/false);
  ASSERT_TRUE(host->Complete("source").ok());  // x0 is filled and offered.
  ASSERT_TRUE(host->Step().value());           // relu launches firing 0 and holds x0 while it runs.
  Status status = host->Inject(kSource, kRelu, ReadyMessage(kX, 0, 1));
  EXPECT_THAT(status.message(), HasSubstr("while all 1 slots are still held"));
}

TEST(ActorProtocolViolationTest, AReadyFromAnActorThatIsNotTheProducerIsAnError) {
  auto host = StartedChain(2, 1);
  Status status = host->Inject(kSink, kRelu, ReadyMessage(kX, 0, 0));
  EXPECT_THAT(status.message(), HasSubstr("actor 'relu' (1): register 'x' (0): Ready from "
                                          "actor 2, which is not its producer (actor 0)"));
}

TEST(ActorProtocolViolationTest, AReleaseFromAnActorThatIsNotAConsumerIsAnError) {
  auto host = StartedChain(2, 1);
  Status status = host->Inject(kSink, kSource, ReleaseMessage(kX, 0, 0));
  EXPECT_THAT(status.message(), HasSubstr("actor 'source' (0): register 'x' (0): Release from "
                                          "actor 2, which is not its consumer"));
}

TEST(ActorProtocolViolationTest, AMessageAboutARegisterTheActorDoesNotTouchIsAnError) {
  auto host = StartedChain(2, 1);
  EXPECT_THAT(host->Inject(kRelu, kSink, ReadyMessage(kX, 0, 0)).message(),
              HasSubstr("actor 'sink' (2): Ready of register 0 from actor 1, but it does not "
                        "read that register"));
  EXPECT_THAT(host->Inject(kSink, kRelu, ReleaseMessage(kX, 0, 0)).message(),
              HasSubstr("actor 'relu' (1): Release of register 0 from actor 2, but it does not "
                        "write that register"));
}

TEST(ActorProtocolViolationTest, EndOfStreamBeforeTheLastFillIsAnError) {
  auto host = StartedChain(2, 1);
  Status status = host->Inject(kSource, kRelu, EndOfStreamMessage(kX));
  EXPECT_THAT(status.message(),
              HasSubstr("actor 'relu' (1): register 'x' (0): EndOfStream after 0 of 2 fills"));
}

TEST(ActorProtocolViolationTest, AReadyAfterEndOfStreamIsAnError) {
  auto host = StartedChain(1, 1);
  ASSERT_TRUE(host->Run().ok());
  Status status = host->Inject(kSource, kRelu, ReadyMessage(kX, 0, 1));
  EXPECT_THAT(status.message(), HasSubstr("register 'x' (0): Ready after EndOfStream"));
}

TEST(ActorProtocolViolationTest, CompletingAFiringThatIsNotRunningIsAnInternalError) {
  auto host = StartedChain(2, 1, /*complete_immediately=*/false);
  Outbox outbox;
  Status status = host->protocol("relu").OnFiringDone(0, &outbox);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("completion of firing 0, but no firing is running"));
  status = host->protocol("source").OnFiringDone(1, &outbox);
  EXPECT_THAT(status.message(), HasSubstr("completion of firing 1, but firing 0 is running"));
}

TEST(ActorProtocolWaitTest, IdleActorsSayWhichFillOrSlotTheyWaitForAndOnWhom) {
  auto host = StartedChain(2, 1);
  // source filled x0 and has no free slot for x1; nothing is delivered yet.
  WaitState source = host->protocol("source").DescribeWait();
  EXPECT_EQ(source.kind, WaitState::Kind::kBlocked);
  EXPECT_EQ(source.next_firing, 1);
  EXPECT_EQ(source.register_id, kX);
  EXPECT_EQ(source.sequence, 0);  // The oldest fill still held.
  EXPECT_EQ(source.waiting_on, std::vector<ActorId>{kRelu});
  WaitState relu = host->protocol("relu").DescribeWait();
  EXPECT_EQ(relu.kind, WaitState::Kind::kStarved);
  EXPECT_EQ(relu.register_id, kX);
  EXPECT_EQ(relu.sequence, 0);
  EXPECT_EQ(relu.waiting_on, std::vector<ActorId>{kSource});
  WaitState sink = host->protocol("sink").DescribeWait();
  EXPECT_EQ(sink.kind, WaitState::Kind::kStarved);
  EXPECT_EQ(sink.register_id, kY);
  EXPECT_EQ(sink.waiting_on, std::vector<ActorId>{kRelu});
  EXPECT_STREQ(WaitKindName(source.kind), "blocked");
  EXPECT_STREQ(WaitKindName(relu.kind), "starved");
}

TEST(ActorProtocolWaitTest, ARunningFiringIsReportedAsRunning) {
  auto host = StartedChain(2, 1, /*complete_immediately=*/false);
  WaitState source = host->protocol("source").DescribeWait();
  EXPECT_EQ(source.kind, WaitState::Kind::kRunning);
  EXPECT_EQ(source.next_firing, 0);
  EXPECT_EQ(host->protocol("source").occupied_slots(0), 1);  // Being written.
}

TEST(ActorProtocolFinishTest, AnActorFinishesOnlyWithEveryFiringSlotAndEndOfStream) {
  auto host = StartedChain(1, 1);
  ActorProtocol& source = host->protocol("source");
  ActorProtocol& relu = host->protocol("relu");
  ActorProtocol& sink = host->protocol("sink");
  // source fired its only firing, but x0 is still out.
  EXPECT_EQ(source.completed_firings(), 1);
  EXPECT_FALSE(source.finished());
  WaitState wait = source.DescribeWait();
  EXPECT_EQ(wait.kind, WaitState::Kind::kDraining);
  EXPECT_EQ(wait.register_id, kX);
  EXPECT_EQ(wait.waiting_on, std::vector<ActorId>{kRelu});
  ASSERT_TRUE(host->Step().value());  // relu fires: Release x0, Ready y0, EndOfStream y.
  EXPECT_EQ(relu.completed_firings(), 1);
  EXPECT_FALSE(relu.finished());      // EndOfStream(x) not delivered, y0 still out.
  ASSERT_TRUE(host->Step().value());  // EndOfStream(x) reaches relu.
  EXPECT_FALSE(relu.finished());
  wait = relu.DescribeWait();
  EXPECT_EQ(wait.kind, WaitState::Kind::kDraining);
  EXPECT_EQ(wait.register_id, kY);
  EXPECT_EQ(wait.waiting_on, std::vector<ActorId>{kSink});
  ASSERT_TRUE(host->Step().value());  // Release x0 reaches source.
  EXPECT_TRUE(source.finished());
  ASSERT_TRUE(host->Step().value());  // sink fires.
  EXPECT_EQ(sink.completed_firings(), 1);
  EXPECT_FALSE(sink.finished());
  wait = sink.DescribeWait();
  EXPECT_EQ(wait.kind, WaitState::Kind::kDraining);
  EXPECT_EQ(wait.register_id, kY);  // Its input has not ended.
  EXPECT_EQ(wait.waiting_on, std::vector<ActorId>{kRelu});
  ASSERT_TRUE(host->Run().ok());
  EXPECT_TRUE(sink.finished());
  EXPECT_TRUE(relu.finished());
  EXPECT_EQ(sink.DescribeWait().kind, WaitState::Kind::kFinished);
  // Each actor reported finished exactly once.
  int finished_lines = 0;
  for (const std::string& line : host->transcript()) {
    finished_lines += line.find(": finished") != std::string::npos;
  }
  EXPECT_EQ(finished_lines, 3);
}

}  // namespace
}  // namespace actors
}  // namespace softwire
