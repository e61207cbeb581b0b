// Several fills of one send in flight (docs/PROTOCOL.md, "Several firings in flight";
// docs/DATA_PLANE.md, "Several fills in flight"): a two-node plan source -> send -> wire (4
// slots, node1) -> recv (doubles) -> sink, hosted as two shares in one process, the send's
// bytes landed by a transport that completes every fill late, in order, on a thread of its own
// (as the data plane's writer does). With max_in_flight 4 on the send:
//   - several fills are in flight at once, never more than the wire register's slots, and never
//     two in one slot;
//   - every piece's value arrives, in order: the sink reports 2 * piece for piece 0, 1, 2, ...
//     (a slot written again before the recv read it would show another value);
// and with max_in_flight 1 one fill at a time, the same values.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/host/execution.h"
#include "runtime/host/hosted_plan.h"
#include "runtime/host/job_events.h"
#include "runtime/host/node_runtime.h"
#include "runtime/host/test_plans.h"
#include "runtime/host/wire_transport.h"

namespace softwire {
namespace runtime {
namespace {

using namespace std::chrono_literals;
using testing::TestActorSpec;

constexpr int kWireSlots = 4;
constexpr int64_t kPieces = 48;
constexpr actors::JobId kJob = 21;

// source (node0) -> x -> send:x -> wire (node1, kWireSlots) -> recv:x (double) -> y -> sink.
proto::Plan TransferPlan(int send_in_flight) {
  testing::TestPlan builder(/*steps=*/kPieces, /*pieces_per_step=*/1);
  builder.Register("x", kWireSlots).Register("wire", kWireSlots).Register("y", 2);  // Scalars.
  builder.Actor(TestActorSpec("source", proto::ACTOR_KIND_SOURCE, "piece_source", {}, {"x"}));
  builder.Actor(
      TestActorSpec("send:x", proto::ACTOR_KIND_SEND, "copy", {"x"}, {"wire"}).OnQueue(1));
  builder.Actor(
      TestActorSpec("recv:x", proto::ACTOR_KIND_RECV, "double", {"wire"}, {"y"}).OnDevice(1));
  builder.Actor(TestActorSpec("sink", proto::ACTOR_KIND_SINK, "report", {"y"}, {}).OnDevice(1));
  builder.Output("sink", /*is_loss=*/false);
  proto::Plan plan = builder.Build();
  runtime::testing::PlaceWireOnReceiver(&plan, /*wire=*/1, "node1");
  plan.mutable_actor(1)->set_max_in_flight(send_in_flight);
  return plan;
}

// Lands every fill through `inner` 300 us after it was handed over, in the order handed over,
// on a thread of its own; counts the fills handed over and not yet completed.
class LateTransport final : public WireTransport {
 public:
  explicit LateTransport(WireTransport* inner) : inner_(inner), worker_([this] { Work(); }) {}
  ~LateTransport() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ending_ = true;
    }
    changed_.notify_all();
    worker_.join();
  }

  void Write(const WireWrite& write, std::function<void(Status)> done) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (busy_slots_.count(write.slot) != 0) ++slot_reused_in_flight;
    busy_slots_.insert(write.slot);
    max_in_flight = std::max<int>(max_in_flight, static_cast<int>(busy_slots_.size()));
    queue_.push_back({write, std::move(done)});
    changed_.notify_all();
  }

  // Read after the run (the worker has completed every fill: Run waited for them).
  int max_in_flight = 0;
  int slot_reused_in_flight = 0;

 private:
  struct Pending {
    WireWrite write;
    std::function<void(Status)> done;
  };

  void Work() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      changed_.wait(lock, [this] { return ending_ || !queue_.empty(); });
      if (queue_.empty()) return;
      Pending next = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      std::this_thread::sleep_for(300us);
      inner_->Write(next.write, [this, &next](Status status) {
        {
          std::lock_guard<std::mutex> done_lock(mutex_);
          busy_slots_.erase(busy_slots_.find(next.write.slot));
        }
        next.done(std::move(status));
      });
      lock.lock();
    }
  }

  WireTransport* const inner_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Pending> queue_;
  std::multiset<int32_t> busy_slots_;
  bool ending_ = false;
  std::thread worker_;
};

class SinkValues final : public JobEvents {
 public:
  void OnStep(const CollectedStep& step) override {
    auto found = step.outputs.find("sink");
    if (found != step.outputs.end()) values.push_back(found->second);
  }
  std::vector<double> values;
};

struct Transfer {
  std::vector<double> values;  // The sink's, step by step.
  int max_in_flight = 0;
  int slot_reused_in_flight = 0;
};

Transfer RunTransfer(int send_in_flight) {
  const proto::Plan plan = TransferPlan(send_in_flight);
  KernelRegistry kernels;
  testing::RegisterTestKernels(&kernels, nullptr);
  std::vector<std::unique_ptr<NodeRuntime>> runtimes;
  for (const std::string node : {"node0", "node1"}) {
    NodeRuntimeOptions options;
    options.kernels.cpu = &kernels;
    for (const proto::PlanDevice& device : plan.device()) {
      if (device.node() != node) continue;
      DeviceSpec spec;
      spec.device = device;
      options.devices.push_back(spec);
    }
    StatusOr<std::unique_ptr<NodeRuntime>> runtime = NodeRuntime::Create(std::move(options));
    EXPECT_TRUE(runtime.ok()) << runtime.status();
    if (!runtime.ok()) return {};
    runtimes.push_back(std::move(runtime).value());
  }
  StatusOr<std::unique_ptr<HostedPlan>> node0 =
      HostedPlan::Load(runtimes[0].get(), plan, "node0", kJob);
  StatusOr<std::unique_ptr<HostedPlan>> node1 =
      HostedPlan::Load(runtimes[1].get(), plan, "node1", kJob);
  EXPECT_TRUE(node0.ok()) << node0.status();
  EXPECT_TRUE(node1.ok()) << node1.status();
  if (!node0.ok() || !node1.ok()) return {};
  EXPECT_TRUE((*node0)->Bind({node1->get()}).ok());
  EXPECT_TRUE((*node1)->Bind({node0->get()}).ok());
  InProcessWireTransport in_process(&(*node0)->register_slots());
  Transfer transfer;
  SinkValues sink;
  {
    LateTransport late(&in_process);
    ExecutionOptions options;
    options.stall_timeout = 20s;
    StatusOr<std::unique_ptr<Execution>> run0 =
        Execution::Create(runtimes[0].get(), node0->get(), options);
    options.events = &sink;
    StatusOr<std::unique_ptr<Execution>> run1 =
        Execution::Create(runtimes[1].get(), node1->get(), options);
    EXPECT_TRUE(run0.ok()) << run0.status();
    EXPECT_TRUE(run1.ok()) << run1.status();
    if (!run0.ok() || !run1.ok()) return {};
    (*run0)->router().ConnectPeer(*(*node0)->ActorsOf("node1"), &(*run1)->router());
    (*run1)->router().ConnectPeer(*(*node1)->ActorsOf("node0"), &(*run0)->router());
    (*node0)->SetWireTransport(&late);
    Status status1;
    std::thread node1_thread([&] { status1 = (*run1)->Run(); });
    const Status status0 = (*run0)->Run();
    node1_thread.join();
    (*node0)->SetWireTransport(nullptr);
    EXPECT_TRUE(status0.ok()) << status0;
    EXPECT_TRUE(status1.ok()) << status1;
    transfer.max_in_flight = late.max_in_flight;
    transfer.slot_reused_in_flight = late.slot_reused_in_flight;
  }
  transfer.values = sink.values;
  return transfer;
}

std::vector<double> TwicePieces() {
  std::vector<double> expected;
  for (int64_t piece = 0; piece < kPieces; ++piece) expected.push_back(2.0 * piece);
  return expected;
}

TEST(SendInFlightTest, SeveralFillsInFlightKeepOrderAndValuesAndStayWithinTheSlots) {
  const Transfer transfer = RunTransfer(kWireSlots);
  EXPECT_EQ(transfer.values, TwicePieces());
  EXPECT_GE(transfer.max_in_flight, 2) << "the send never had two fills in flight";
  EXPECT_LE(transfer.max_in_flight, kWireSlots);
  EXPECT_EQ(transfer.slot_reused_in_flight, 0) << "a slot was written while a fill was in it";
}

TEST(SendInFlightTest, OneFillAtATimeGivesTheSameValues) {
  const Transfer transfer = RunTransfer(1);
  EXPECT_EQ(transfer.values, TwicePieces());
  EXPECT_EQ(transfer.max_in_flight, 1);
  EXPECT_EQ(transfer.slot_reused_in_flight, 0);
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
