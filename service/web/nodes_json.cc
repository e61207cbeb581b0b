#include "service/web/nodes_json.h"

#include <map>
#include <string>
#include <utility>

namespace softwire {
namespace service {

nlohmann::json NodesJson(const std::vector<proto::NodeInfo>& nodes, int nodes_wanted) {
  nlohmann::json list = nlohmann::json::array();
  for (const proto::NodeInfo& node : nodes) {
    nlohmann::json devices = nlohmann::json::array();
    for (const proto::DeviceSpec& device : node.node().device()) {
      devices.push_back(node.node().name() + "/" + device.name());
    }
    nlohmann::json runs = nlohmann::json::array();
    for (int64_t run : node.run_id()) runs.push_back(run);
    nlohmann::json entry = {{"name", node.node().name()},
                            {"host", node.node().address()},
                            {"devices", devices},
                            {"data_plane_address", node.data_plane_address()},
                            {"pid", node.pid()},
                            {"heartbeat_age_seconds", node.heartbeat_age_seconds()},
                            {"clock_probes", node.clock_probes()},
                            {"run_ids", runs}};
    if (node.clock_probes() > 0) {
      entry["clock_offset_seconds"] = node.clock_offset_seconds();
      entry["clock_round_trip_seconds"] = node.clock_round_trip_seconds();
    } else {
      entry["clock_offset_seconds"] = nullptr;
      entry["clock_round_trip_seconds"] = nullptr;
    }
    list.push_back(std::move(entry));
  }
  return {{"nodes", list}, {"nodes_wanted", nodes_wanted}};
}

nlohmann::json LinksJson(const trace::TraceModel& model) {
  const trace::PlanFacts& plan = model.plan;
  auto node_of = [&plan](int32_t actor) -> std::string {
    const int32_t device = plan.actors[static_cast<size_t>(actor)].device;
    if (device < 0 || static_cast<size_t>(device) >= plan.devices.size()) return "?";
    return plan.devices[static_cast<size_t>(device)].node;
  };
  // Per send actor: its link and the bytes one firing moves.
  struct SendFacts {
    std::pair<std::string, std::string> link;
    int64_t bytes = 0;
  };
  std::map<int32_t, SendFacts> sends;
  for (size_t id = 0; id < plan.actors.size(); ++id) {
    const trace::ActorFacts& actor = plan.actors[id];
    if (actor.kind != "send") continue;
    SendFacts facts;
    facts.link.first = node_of(static_cast<int32_t>(id));
    facts.link.second = "?";
    for (int32_t output : actor.outputs) {
      for (int32_t consumer : plan.registers[static_cast<size_t>(output)].consumers) {
        if (plan.actors[static_cast<size_t>(consumer)].kind == "recv") {
          facts.link.second = node_of(consumer);
        }
      }
    }
    if (!actor.inputs.empty()) {
      facts.bytes = plan.registers[static_cast<size_t>(actor.inputs.front())].bytes_per_slot;
    }
    sends[static_cast<int32_t>(id)] = std::move(facts);
  }
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> links;  // bytes, n
  for (const trace::FiringRecord& firing : model.firings) {
    auto send = sends.find(firing.actor);
    if (send == sends.end()) continue;
    auto& [bytes, count] = links[send->second.link];
    bytes += send->second.bytes;
    ++count;
  }
  const double seconds = static_cast<double>(model.span_end() - model.span_begin()) * 1e-9;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [link, totals] : links) {
    list.push_back(
        {{"from", link.first},
         {"to", link.second},
         {"bytes", totals.first},
         {"sends", totals.second},
         {"bytes_per_second", seconds > 0 ? static_cast<double>(totals.first) / seconds : 0.0}});
  }
  nlohmann::json nodes = nlohmann::json::array();
  for (const trace::NodeClockOffset& offset : model.info.clock_offsets) {
    nodes.push_back(
        {{"node", offset.node}, {"offset_ns", offset.offset_ns}, {"error_ns", offset.error_ns}});
  }
  return {{"links", list}, {"seconds", seconds}, {"nodes", nodes}};
}

}  // namespace service
}  // namespace softwire
