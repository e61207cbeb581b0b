// The traces of a job on nodes: each node records its share's firings on its own steady clock
// and sends them to the server in TraceChunks (proto/nodes.proto) when its run ends; the server
// puts them together into the job's one trace, every node's times moved onto the server's time
// axis by the node's measured clock offset (docs/NODES.md, docs/TRACING.md).
//
//   // On the node, after Execution::Run:
//   for (proto::NodeReport& report : TraceChunkReports(run_id, *execution->TakeTrace()))
//     send(std::move(report));
//
//   // On the server, as the chunks come:
//   NodeTraceAssembler traces;
//   SOFTWIRE_RETURN_IF_ERROR(traces.Add("node1", report.trace()));
//   ... every node's last chunk came (complete()):
//   StatusOr<trace::TraceLog> log = traces.Merge(plan, window, {{"node1", offset}, ...});
//   trace::WriteTraceFiles(path, *log);
//
// The plan's actor ids are the whole plan's on every node (a node hosts its share of the whole
// plan), so the merged log's events need no renumbering: its flows (a Ready from a send actor on
// one node to its recv on another) follow from the plan's facts as in a one-process trace.
//
// Threading: NodeTraceAssembler is not thread-safe (its owner locks). Failure: Add refuses a
// chunk out of order, a second trace of a node, or events that are not whole records, naming
// the node.
#ifndef SOFTWIRE_SERVICE_NODE_TRACES_H_
#define SOFTWIRE_SERVICE_NODE_TRACES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/nodes.pb.h"
#include "proto/plan.pb.h"
#include "trace/trace_model.h"

namespace softwire {
namespace service {

// About 1 MiB of events a chunk: well under gRPC's message limits, and a 100 MB trace in 100
// messages.
constexpr int64_t kTraceChunkBytes = int64_t{1} << 20;

// `log` (a node's TakeTrace) as the NodeReports that carry it, in order; at least one (a trace
// without events still says how the recording went).
std::vector<proto::NodeReport> TraceChunkReports(int64_t run_id, const trace::TraceLog& log,
                                                 int64_t chunk_bytes = kTraceChunkBytes);

// Tightens the offsets of a merged log by its own order: a Ready that crosses nodes (a send's
// firing on one node to its recv's firing on another) arrives after it left, so the recv's
// firing starts no earlier than the send's firing ended. The probes bound each offset only to
// +-half a round trip (a millisecond on a loaded host); where a crossing flow would run
// backwards, the two nodes' clocks are moved apart by the violation (half each), pairs of nodes
// in turn until no flow runs backwards. The events and clock_offsets move together; a move
// beyond a node's error bound is logged (it means the order and the probes disagree).
Status AlignByFlows(trace::TraceLog* log);

// The clock offsets of the nodes that answered a clock probe, as Merge takes them, from the
// registry's view of its nodes (NodeRegistry::Nodes): NodeInfo's offset is node time - server
// time; a trace's is what takes node time to server time; the error is half the round trip.
std::map<std::string, trace::NodeClockOffset> TraceClockOffsets(
    const std::vector<proto::NodeInfo>& nodes);

class NodeTraceAssembler {
 public:
  // One chunk of `node`'s trace.
  Status Add(const std::string& node, const proto::TraceChunk& chunk);
  // Whether `node`'s last chunk came.
  bool complete(const std::string& node) const;
  // Whether any chunk came.
  bool empty() const { return traces_.empty(); }
  // Bytes of events held.
  int64_t bytes() const { return bytes_; }

  // The job's trace: `plan`'s facts, the events of every node whose trace is complete, each
  // moved by its offset (node time + offset_ns = server time; error_ns is half the probe's
  // round trip), then AlignByFlows; the origin the earliest node's. `window` is the steps
  // recorded. A node without an offset is refused (FailedPrecondition naming it).
  StatusOr<trace::TraceLog> Merge(const proto::Plan& plan, const trace::StepWindow& window,
                                  const std::map<std::string, trace::NodeClockOffset>& offsets);

 private:
  struct NodeTrace {
    int64_t next_sequence = 0;
    bool complete = false;
    int64_t origin_ns = 0;
    int64_t event_cap = 0;
    int64_t events_dropped = 0;
    std::string outcome;
    std::vector<trace::TraceEvent> events;
  };
  std::map<std::string, NodeTrace> traces_;
  int64_t bytes_ = 0;
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_NODE_TRACES_H_
