// The nodes page's JSON (nodes_json.h): the registry's nodes as listed, an unmeasured clock as
// null; a traced job's bytes per link from its send firings, each moving one fill of the register
// it sends to the node of the recv that consumes its wire register.
#include "service/web/nodes_json.h"

#include <gtest/gtest.h>

#include <string>

namespace softwire {
namespace service {
namespace {

TEST(NodesJsonTest, ListsEachNodeWithItsDevicesHeartbeatAndClock) {
  proto::NodeInfo measured;
  measured.mutable_node()->set_name("node0");
  measured.mutable_node()->set_address("10.0.0.1");
  measured.mutable_node()->add_device()->set_name("cpu:0");
  measured.mutable_node()->add_device()->set_name("cpu:1");
  measured.set_heartbeat_age_seconds(0.25);
  measured.set_clock_probes(8);
  measured.set_clock_offset_seconds(-2.5e-5);
  measured.set_clock_round_trip_seconds(1e-4);
  measured.add_run_id(3);
  proto::NodeInfo unmeasured;
  unmeasured.mutable_node()->set_name("node1");
  unmeasured.mutable_node()->add_device()->set_name("cpu:0");

  const nlohmann::json json = NodesJson({measured, unmeasured}, 2);
  EXPECT_EQ(json["nodes_wanted"], 2);
  ASSERT_EQ(json["nodes"].size(), 2u);
  const nlohmann::json& first = json["nodes"][0];
  EXPECT_EQ(first["name"], "node0");
  EXPECT_EQ(first["host"], "10.0.0.1");
  EXPECT_EQ(first["devices"], nlohmann::json({"node0/cpu:0", "node0/cpu:1"}));
  EXPECT_DOUBLE_EQ(first["heartbeat_age_seconds"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(first["clock_offset_seconds"].get<double>(), -2.5e-5);
  EXPECT_EQ(first["run_ids"], nlohmann::json({3}));
  EXPECT_TRUE(json["nodes"][1]["clock_offset_seconds"].is_null());
  EXPECT_EQ(json["nodes"][1]["clock_probes"], 0);
  EXPECT_EQ(NodesJson({}, 0)["nodes"].size(), 0u);
}

// node0: a producer feeding a send; node1: its recv. Three send firings over one second.
trace::TraceModel TwoNodes() {
  trace::TraceModel model;
  for (const char* node : {"node0", "node1"}) {
    trace::DeviceFacts device;
    device.name = std::string(node) + "/cpu:0";
    device.node = node;
    device.kind = "cpu";
    model.plan.devices.push_back(device);
  }
  trace::ActorFacts producer;
  producer.name = "matmul";
  producer.kind = "compute";
  producer.outputs = {0};
  trace::ActorFacts send;
  send.name = "send";
  send.kind = "send";
  send.inputs = {0};
  send.outputs = {1};
  trace::ActorFacts recv;
  recv.name = "recv";
  recv.kind = "recv";
  recv.device = 1;
  recv.inputs = {1};
  model.plan.actors = {producer, send, recv};
  trace::RegisterFacts value;
  value.producer = 0;
  value.bytes_per_slot = 4096;
  value.consumers = {1};
  trace::RegisterFacts wire;
  wire.producer = 1;
  wire.bytes_per_slot = 4096;
  wire.consumers = {2};
  model.plan.registers = {value, wire};
  for (int64_t i = 0; i < 3; ++i) {
    trace::FiringRecord firing;
    firing.actor = 1;
    firing.firing = i;
    firing.start = i * 400'000'000;
    firing.end = firing.start + 100'000'000;
    model.firings.push_back(firing);
    firing.actor = 2;
    firing.start += 100'000'000;
    firing.end += 100'000'000;
    model.firings.push_back(firing);
  }
  model.info.clock_offsets = {{"node0", 10, 2}, {"node1", -7, 3}};
  return model;
}

TEST(NodesJsonTest, CountsEachSendFiringsFillOnItsLink) {
  const nlohmann::json json = LinksJson(TwoNodes());
  ASSERT_EQ(json["links"].size(), 1u) << json.dump();
  const nlohmann::json& link = json["links"][0];
  EXPECT_EQ(link["from"], "node0");
  EXPECT_EQ(link["to"], "node1");
  EXPECT_EQ(link["bytes"], 3 * 4096);
  EXPECT_EQ(link["sends"], 3);
  EXPECT_DOUBLE_EQ(json["seconds"].get<double>(), 1.0);  // 0 .. 0.8 s + 0.2 s.
  EXPECT_DOUBLE_EQ(link["bytes_per_second"].get<double>(), 3 * 4096.0);
  ASSERT_EQ(json["nodes"].size(), 2u);
  EXPECT_EQ(json["nodes"][1]["node"], "node1");
  EXPECT_EQ(json["nodes"][1]["offset_ns"], -7);
}

TEST(NodesJsonTest, AJobOnOneNodeHasNoLinks) {
  trace::TraceModel model = TwoNodes();
  model.plan.actors[1].kind = "copy";
  EXPECT_EQ(LinksJson(model)["links"].size(), 0u);
}

}  // namespace
}  // namespace service
}  // namespace softwire
