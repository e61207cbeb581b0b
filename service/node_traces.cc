#include "service/node_traces.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "trace/plan_facts.h"

namespace softwire {
namespace service {

std::vector<proto::NodeReport> TraceChunkReports(int64_t run_id, const trace::TraceLog& log,
                                                 int64_t chunk_bytes) {
  const int64_t per_chunk =
      std::max<int64_t>(1, chunk_bytes / static_cast<int64_t>(sizeof(trace::TraceEvent)));
  const int64_t total = static_cast<int64_t>(log.events.size());
  std::vector<proto::NodeReport> reports;
  int64_t first = 0;
  do {
    const int64_t count = std::min(per_chunk, total - first);
    proto::NodeReport report;
    proto::TraceChunk* chunk = report.mutable_trace();
    chunk->set_run_id(run_id);
    chunk->set_sequence(static_cast<int64_t>(reports.size()));
    if (reports.empty()) {
      chunk->set_origin_ns(log.info.origin_ns);
      chunk->set_event_cap(log.info.event_cap);
      chunk->set_events_dropped(log.info.events_dropped);
      chunk->set_outcome(log.info.outcome);
    }
    chunk->set_events(reinterpret_cast<const char*>(log.events.data() + first),
                      static_cast<size_t>(count) * sizeof(trace::TraceEvent));
    first += count;
    chunk->set_last(first >= total);
    reports.push_back(std::move(report));
  } while (first < total);
  return reports;
}

namespace {

// Node clocks' times and offsets are bounded by 2^60 ns (36 years; the registry ignores probe
// replies with larger offsets), so that a time moved by an offset, and the difference of two
// such times, stay far inside int64.
constexpr int64_t kMaxTraceTime = int64_t{1} << 60;

bool TraceTimeInRange(int64_t time) {
  return time > -kMaxTraceTime && time < kMaxTraceTime;
}

// A clock shift of AlignByFlows, kept within +-2^61 ns: times (< 2^61 after their offsets) and
// shifts then add and subtract inside int64.
int64_t ClampShift(int64_t shift) {
  return std::max(-2 * kMaxTraceTime, std::min(2 * kMaxTraceTime, shift));
}

}  // namespace

std::map<std::string, trace::NodeClockOffset> TraceClockOffsets(
    const std::vector<proto::NodeInfo>& nodes) {
  std::map<std::string, trace::NodeClockOffset> offsets;
  for (const proto::NodeInfo& node : nodes) {
    if (node.clock_probes() == 0) continue;
    trace::NodeClockOffset offset;
    offset.node = node.node().name();
    offset.offset_ns = -std::llround(node.clock_offset_seconds() * 1e9);
    offset.error_ns = std::llround(node.clock_round_trip_seconds() * 0.5e9);
    offsets[offset.node] = offset;
  }
  return offsets;
}

Status NodeTraceAssembler::Add(const std::string& node, const proto::TraceChunk& chunk) {
  NodeTrace& trace = traces_[node];
  if (trace.complete) {
    return FailedPreconditionError("node '" + node + "' sent a second trace of run " +
                                   std::to_string(chunk.run_id()));
  }
  if (chunk.sequence() != trace.next_sequence) {
    return DataLossError("node '" + node + "' sent trace chunk " +
                         std::to_string(chunk.sequence()) + " where chunk " +
                         std::to_string(trace.next_sequence) + " was due");
  }
  if (chunk.events().size() % sizeof(trace::TraceEvent) != 0) {
    return DataLossError("node '" + node + "' sent a trace chunk of " +
                         std::to_string(chunk.events().size()) + " bytes, not whole records of " +
                         std::to_string(sizeof(trace::TraceEvent)));
  }
  const size_t count = chunk.events().size() / sizeof(trace::TraceEvent);
  std::vector<trace::TraceEvent> events(count);
  if (count > 0) std::memcpy(events.data(), chunk.events().data(), chunk.events().size());
  for (const trace::TraceEvent& event : events) {
    if (!TraceTimeInRange(event.launch) || !TraceTimeInRange(event.start) ||
        !TraceTimeInRange(event.end)) {
      return DataLossError("node '" + node + "' sent a trace event of actor " +
                           std::to_string(event.actor) + " with a time beyond +-2^60 ns");
    }
  }
  if (chunk.sequence() == 0 && !TraceTimeInRange(chunk.origin_ns())) {
    return DataLossError("node '" + node + "' sent a trace origin beyond +-2^60 ns");
  }
  if (chunk.sequence() == 0) {
    trace.origin_ns = chunk.origin_ns();
    trace.event_cap = chunk.event_cap();
    trace.events_dropped = chunk.events_dropped();
    trace.outcome = chunk.outcome();
  }
  trace.events.insert(trace.events.end(), events.begin(), events.end());
  bytes_ += static_cast<int64_t>(chunk.events().size());
  ++trace.next_sequence;
  trace.complete = chunk.last();
  return Status::Ok();
}

bool NodeTraceAssembler::complete(const std::string& node) const {
  auto found = traces_.find(node);
  return found != traces_.end() && found->second.complete;
}

StatusOr<trace::TraceLog> NodeTraceAssembler::Merge(
    const proto::Plan& plan, const trace::StepWindow& window,
    const std::map<std::string, trace::NodeClockOffset>& offsets) {
  trace::TraceLog log;
  log.plan = trace::DescribePlan(plan);
  log.info.engine = "caf-runtime";
  log.info.clock = "CLOCK_MONOTONIC of the server (each node's moved by its clock offset)";
  log.info.window = window;
  log.info.outcome = "ok";
  int64_t origin = std::numeric_limits<int64_t>::max();
  size_t events = 0;
  for (const auto& [node, trace] : traces_) {
    if (!trace.complete) continue;
    auto offset = offsets.find(node);
    if (offset == offsets.end()) {
      return FailedPreconditionError("node '" + node +
                                     "' has no measured clock offset: its trace cannot be put on "
                                     "the server's time axis");
    }
    origin = std::min(origin, trace.origin_ns + offset->second.offset_ns);
    events += trace.events.size();
  }
  if (origin == std::numeric_limits<int64_t>::max()) {
    return FailedPreconditionError("no node sent its whole trace");
  }
  log.info.origin_ns = origin;
  log.events.reserve(events);
  for (auto& [node, trace] : traces_) {
    if (!trace.complete) continue;
    const trace::NodeClockOffset& offset = offsets.at(node);
    log.info.clock_offsets.push_back(offset);
    log.info.event_cap += trace.event_cap;
    log.info.events_dropped += trace.events_dropped;
    if (trace.outcome != "ok" && log.info.outcome == "ok") {
      log.info.outcome = "node '" + node + "': " + trace.outcome;
    }
    for (trace::TraceEvent event : trace.events) {
      event.launch += offset.offset_ns;
      event.start += offset.offset_ns;
      event.end += offset.offset_ns;
      log.events.push_back(event);
    }
    trace.events.clear();
    trace.events.shrink_to_fit();
  }
  log.info.events_recorded = static_cast<int64_t>(log.events.size());
  bytes_ = 0;
  SOFTWIRE_RETURN_IF_ERROR(AlignByFlows(&log));
  return log;
}

Status AlignByFlows(trace::TraceLog* log) {
  if (log->info.clock_offsets.size() < 2) return Status::Ok();
  SOFTWIRE_ASSIGN_OR_RETURN(trace::TraceModel model, trace::BuildTraceModel(*log));
  const trace::PlanFacts& plan = log->plan;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < log->info.clock_offsets.size(); ++i) {
    index[log->info.clock_offsets[i].node] = i;
  }
  // Node index of each actor (SIZE_MAX for a node without an offset).
  std::vector<size_t> node_of(plan.actors.size(), SIZE_MAX);
  for (size_t actor = 0; actor < plan.actors.size(); ++actor) {
    const size_t device = static_cast<size_t>(plan.actors[actor].device);
    if (device >= plan.devices.size()) continue;
    auto found = index.find(plan.devices[device].node);
    if (found != index.end()) node_of[actor] = found->second;
  }
  std::map<std::pair<int32_t, int64_t>, trace::TimeNs> started;
  for (const trace::FiringRecord& firing : model.firings) {
    started[{firing.actor, firing.firing}] = firing.start;
  }
  // need[a][b]: how much later b's clock must be moved than a's for every Ready from a to b
  // to arrive after it left.
  const size_t nodes = index.size();
  std::vector<std::vector<int64_t>> need(nodes, std::vector<int64_t>(nodes, INT64_MIN));
  for (const trace::FlowRecord& flow : model.flows) {
    const size_t from = node_of[static_cast<size_t>(flow.producer)];
    const size_t to = node_of[static_cast<size_t>(flow.consumer)];
    if (from == SIZE_MAX || to == SIZE_MAX || from == to) continue;
    auto start = started.find({flow.consumer, flow.consumer_firing});
    if (start == started.end()) continue;
    need[from][to] = std::max(need[from][to], flow.sent - start->second);
  }
  // Pairwise projections, each pair's violation split between its two nodes, until none is
  // left (a consistent set converges in a few rounds; an inconsistent one stops at the cap).
  std::vector<int64_t> shift(nodes, 0);
  for (int round = 0; round < 100; ++round) {
    bool moved = false;
    for (size_t a = 0; a < nodes; ++a) {
      for (size_t b = 0; b < nodes; ++b) {
        if (need[a][b] == INT64_MIN) continue;
        const int64_t violation = need[a][b] - (shift[b] - shift[a]);
        if (violation <= 0) continue;
        // Clamped: an inconsistent set (a cycle of flows each arriving before it left) would
        // otherwise grow the shifts every round.
        shift[b] = ClampShift(shift[b] + (violation - violation / 2));
        shift[a] = ClampShift(shift[a] - violation / 2);
        moved = true;
      }
    }
    if (!moved) break;
  }
  for (size_t i = 0; i < nodes; ++i) {
    trace::NodeClockOffset& offset = log->info.clock_offsets[i];
    if (shift[i] != 0 && std::llabs(shift[i]) > offset.error_ns) {
      LOG(WARNING) << "node '" << offset.node << "': the trace's order moves its clock by "
                   << shift[i] << " ns, beyond the probes' error bound of " << offset.error_ns
                   << " ns";
    }
    offset.offset_ns += shift[i];
  }
  for (trace::TraceEvent& event : log->events) {
    const size_t actor = static_cast<size_t>(event.actor);
    if (actor >= node_of.size() || node_of[actor] == SIZE_MAX) continue;
    const int64_t moved = shift[node_of[actor]];
    event.launch += moved;
    event.start += moved;
    event.end += moved;
  }
  return Status::Ok();
}

}  // namespace service
}  // namespace softwire
