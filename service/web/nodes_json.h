// The nodes page's JSON (docs/WEB.md, "Nodes"): the joined node agents as the server's node
// registry sees them now, and a traced job's data-plane traffic per link from its trace.
//
//   nlohmann::json nodes = NodesJson(registry->Nodes(), registry_wanted);
//   nlohmann::json links = LinksJson(*trace::ReadChromeTrace(results.trace_path));
//
// Bytes per link are counted from the trace, not from counters of the data plane: every firing
// of a send actor moves one fill of the register it sends (RegisterFacts.bytes_per_slot) from
// its node to the node of the recv that consumes its wire register. A firing outside the traced
// steps or past the event cap is not counted; "seconds" is the traced span, so bytes_per_second
// is the link's mean rate over the recorded steps. Threading: pure.
#ifndef SOFTWIRE_SERVICE_WEB_NODES_JSON_H_
#define SOFTWIRE_SERVICE_WEB_NODES_JSON_H_

#include <nlohmann/json.hpp>
#include <vector>

#include "proto/nodes.pb.h"
#include "trace/trace_model.h"

namespace softwire {
namespace service {

// {"nodes": [{"name", "host", "devices": ["node0/cpu:0", ...], "data_plane_address", "pid",
// "heartbeat_age_seconds", "clock_offset_seconds", "clock_round_trip_seconds", "clock_probes",
// "run_ids"}...], "nodes_wanted": N}, in join order.
nlohmann::json NodesJson(const std::vector<proto::NodeInfo>& nodes, int nodes_wanted);

// {"links": [{"from": "node0", "to": "node1", "bytes", "sends", "bytes_per_second"}...] by
// (from, to), "seconds": the traced span, "nodes": the trace's nodes with their clock offsets
// [{"node", "offset_ns", "error_ns"}...]}.
nlohmann::json LinksJson(const trace::TraceModel& model);

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_WEB_NODES_JSON_H_
