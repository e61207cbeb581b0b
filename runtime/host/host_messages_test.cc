// The runtime's CAF messages and configuration.
#include "runtime/host/host_messages.h"

#include <gtest/gtest.h>

#include <caf/all.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include "runtime/host/caf_options.h"
#include "runtime/host/spinning_work_sharing.h"

namespace softwire {
namespace runtime {
namespace {

template <class T>
T RoundTrip(const T& value) {
  std::vector<char> buffer;
  caf::binary_serializer sink{nullptr, buffer};
  T copy = value;
  EXPECT_FALSE(sink(copy)) << "serialize";
  T result;
  caf::binary_deserializer source{nullptr, buffer};
  EXPECT_FALSE(source(result)) << "deserialize";
  return result;
}

TEST(HostMessagesTest, ProtocolMessagesSurviveCafSerialization) {
  // Later they cross nodes; every field must be part of inspect().
  actors::ProtocolMessage message;
  message.job = 11;
  message.from = 7;
  message.to = 9;
  message.Set(actors::Release{4, 2, 42});
  actors::ProtocolMessage copy = RoundTrip(message);
  EXPECT_EQ(copy.job, 11);
  EXPECT_EQ(copy.from, 7);
  EXPECT_EQ(copy.to, 9);
  EXPECT_EQ(copy.type, actors::MessageType::kRelease);
  EXPECT_EQ(copy.register_id, 4);
  EXPECT_EQ(copy.slot, 2);
  EXPECT_EQ(copy.sequence, 42);
  std::vector<char> wire;
  caf::binary_serializer sink{nullptr, wire};
  EXPECT_FALSE(sink(message));
  EXPECT_EQ(wire.size(), 48u);  // Five 8-byte fields, slot and type: nothing carried unused.

  WaitReport report;
  report.actor = 2;
  report.kind = 3;
  report.next_firing = 9;
  report.register_id = 1;
  report.sequence = 8;
  report.waiting_on = {4, 6};
  report.completed_firings = 9;
  WaitReport report_copy = RoundTrip(report);
  EXPECT_EQ(report_copy.waiting_on, std::vector<int64_t>({4, 6}));
  EXPECT_EQ(report_copy.completed_firings, 9);

  LaunchDone done;
  done.firing = 12;
  done.code = static_cast<int32_t>(StatusCode::kInternal);
  done.message = "kernel says no";
  LaunchDone done_copy = RoundTrip(done);
  EXPECT_EQ(done_copy.firing, 12);
  EXPECT_EQ(done_copy.message, "kernel says no");
}

TEST(HostMessagesTest, TheTypeIdBlockNamesEveryMessage) {
  EXPECT_STREQ(caf::type_name_by_id<caf::type_id<actors::ProtocolMessage>::value>::value,
               "softwire::actors::ProtocolMessage");
  EXPECT_EQ(caf::id_block::softwire_runtime::end - caf::id_block::softwire_runtime::begin, 3);
}

TEST(CafOptionsTest, DefaultsGiveOneSharingWorkerPerCpuDevice) {
  HostCafConfig config;
  ASSERT_TRUE(
      ConfigureCaf(CafOptions(), /*cpu_devices=*/1, /*has_sim_devices=*/false, &config).ok());
  caf::actor_system system{config};
  EXPECT_EQ(system.scheduler().num_workers(), 1u);
  EXPECT_EQ(caf::get_or(caf::content(config), "scheduler.policy", caf::atom("")),
            caf::atom("sharing"));
  EXPECT_EQ(caf::get_or(caf::content(config), "scheduler.max-throughput", size_t{0}), 300u);
}

TEST(CafOptionsTest, ThreadsFollowTheOptionsOrTheDevicesCappedAtTheCores) {
  CafOptions options;
  EXPECT_EQ(CafThreads(options, 1), 1);
  EXPECT_EQ(CafThreads(options, 0), 1);
  EXPECT_LE(CafThreads(options, 1000), static_cast<int>(std::thread::hardware_concurrency()));
  options.transfer_worker = true;  // A node agent's: one more than its devices' strands.
  EXPECT_EQ(CafThreads(options, 1), 2);
  EXPECT_EQ(CafThreads(options, 1000),
            static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) + 1);
  options.max_threads = 3;
  EXPECT_EQ(CafThreads(options, 1), 3);
  HostCafConfig config;
  options.policy = "stealing";
  ASSERT_TRUE(ConfigureCaf(options, 1, /*has_sim_devices=*/false, &config).ok());
  caf::actor_system system{config};
  EXPECT_EQ(system.scheduler().num_workers(), 3u);
}

TEST(CafOptionsTest, SimOnlyPlansSpinAcrossTheirLongestLaunchUpToACap) {
  EXPECT_EQ(SimOnlyWorkerSpinUs(0), kSimWorkerSpinUs);
  EXPECT_EQ(SimOnlyWorkerSpinUs(0.002), 2500 + kSimWorkerSpinUs);
  EXPECT_EQ(SimOnlyWorkerSpinUs(10.0), kMaxSimWorkerSpinUs);
}

// Answers x + 1. (A class: CAF 0.17's function-based actors without arguments trip UBSan.)
class Echo final : public caf::event_based_actor {
 public:
  explicit Echo(caf::actor_config& config) : caf::event_based_actor(config) {}
  caf::behavior make_behavior() override {
    return {[](int x) { return x + 1; }};
  }
};

TEST(CafOptionsTest, PlansWithSimDevicesGetWorkersThatSpinBeforeTheySleep) {
  CafOptions options;
  EXPECT_EQ(WorkerSpinUs(options, /*has_sim_devices=*/false), 0);
  EXPECT_EQ(WorkerSpinUs(options, /*has_sim_devices=*/true), kSimWorkerSpinUs);
  HostCafConfig config;
  ASSERT_TRUE(ConfigureCaf(options, /*cpu_devices=*/0, /*has_sim_devices=*/true, &config).ok());
  EXPECT_EQ(caf::get_or(caf::content(config), kWorkerSpinKey, size_t{0}),
            static_cast<size_t>(kSimWorkerSpinUs));
  caf::actor_system system{config};
  EXPECT_EQ(system.scheduler().num_workers(), 1u);
  // The spinning scheduler runs actors like any other.
  caf::scoped_actor self{system};
  caf::actor echo = system.spawn<Echo>();
  int answer = 0;
  self->request(echo, std::chrono::seconds(10), 41)
      .receive([&](int x) { answer = x; }, [](caf::error&) {});
  EXPECT_EQ(answer, 42);
  self->send_exit(echo, caf::exit_reason::user_shutdown);
  options.policy = "stealing";
  options.worker_spin_us = 100;
  HostCafConfig stealing;
  EXPECT_FALSE(ConfigureCaf(options, 1, true, &stealing).ok());
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
