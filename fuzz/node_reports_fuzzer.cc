// Fuzz target: what a node agent sends a job server over the node protocol
// (proto/nodes.proto), handled as the server handles it. A node is any process that can reach
// the server's port with its token; a broken or hostile one can send any message: each must
// be taken or refused with a Status, never crash, overflow, hang or allocate gigabytes.
//
// The server's side, transport-free as service/rpc/node_service.cc drives it:
//   JoinNode     NodeRegistry::Join (the node's name, devices, protocol version);
//   Connect      NodeRegistry::Open with the stream's first report's session id, then Deliver
//                of every later report (heartbeats, clock probe replies, a run's reports),
//                then Lost when the stream ends;
// and a run's reports routed as ClusterExecution::OnReport routes them: sink values kept,
// trained variable parts stitched by GatheredVariables (then Take, as the run's end does),
// trace chunks assembled by NodeTraceAssembler (then Merge onto the server's time axis with
// the registry's clock offsets, TraceClockOffsets, as ClusterExecution::WriteTrace does, over
// plan/testing's two-node plan). Not covered: checkpoint parts (CheckpointParts writes the
// parts under a job's state directory as they come).
//
// Input: records, each an op byte, then (ops 0, 1, 3) two bytes of payload length (little
// endian) and the payload:
//   op % 4 == 0  JoinNode with the payload as a JoinNodeRequest; if it joins, its stream opens
//                with the session id the server gave (the honest order) and becomes current;
//   op % 4 == 1  the payload as a NodeReport on the current stream (Deliver);
//   op % 4 == 2  the current stream ends (Lost);
//   op % 4 == 3  a stream opens with the payload as its session id (a forged or stale one).
// Payloads that do not parse are dropped, as gRPC drops a message it cannot decode. Reports
// about run 1 reach the run's listener; others are late news.
#include <glog/logging.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"
#include "plan/testing/two_node_plan.h"
#include "proto/nodes.pb.h"
#include "service/node_registry.h"
#include "service/node_traces.h"
#include "service/variable_parts.h"
#include "trace/trace_model.h"

namespace softwire {
namespace {

constexpr int64_t kRunId = 1;

// One run's reports, routed as ClusterExecution::OnReport routes them (under the registry's
// contract: one call at a time here, from the delivering thread).
class RunReports final : public service::NodeRegistry::RunListener {
 public:
  void OnReport(const std::string& node, const proto::NodeReport& report) override {
    switch (report.report_case()) {
      case proto::NodeReport::kValues:
        for (const proto::SinkValue& value : report.values().value()) values_.push_back(value);
        break;
      case proto::NodeReport::kVariablePart:
        if (report.variable_part().checkpoint_step() > 0) break;  // Not covered (see above).
        (void)variables_.Add(node, report.variable_part());       // A refusal is an answer.
        break;
      case proto::NodeReport::kTrace:
        (void)traces_.Add(node, report.trace());
        break;
      default:
        break;
    }
  }
  void OnNodeLost(const std::string&, const std::string&) override {}

  // What the run's end does with them.
  void Finish(const std::vector<proto::NodeInfo>& nodes) {
    (void)variables_.Take();
    if (traces_.empty()) return;
    static const proto::Plan* const plan = new proto::Plan(plan::testing::TwoNodePlan());
    trace::StepWindow window;
    (void)traces_.Merge(*plan, window, service::TraceClockOffsets(nodes));
  }

 private:
  std::vector<proto::SinkValue> values_;
  // As for a plan whose variables take 64 MiB (ClusterExecution passes its plan's bytes).
  service::GatheredVariables variables_{int64_t{64} << 20};
  service::NodeTraceAssembler traces_;
};

// Reads the record's payload: false when the input ends first.
bool ReadPayload(const uint8_t* data, size_t size, size_t* at, std::string* payload) {
  if (size - *at < 2) return false;
  const size_t length = data[*at] | (static_cast<size_t>(data[*at + 1]) << 8);
  *at += 2;
  if (size - *at < length) return false;
  payload->assign(reinterpret_cast<const char*>(data + *at), length);
  *at += length;
  return true;
}

}  // namespace
}  // namespace softwire

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace softwire;
  // The registry logs every join and loss; at thousands of inputs a second the fuzzer would do
  // little else.
  static const bool quiet = [] {
    FLAGS_minloglevel = google::GLOG_ERROR;
    return true;
  }();
  (void)quiet;
  service::NodeRegistryOptions options;
  options.heartbeat_timeout = std::chrono::hours(1);  // No input is lost to a slow run.
  service::NodeRegistry registry(options);
  RunReports run;
  registry.Subscribe(kRunId, &run);
  std::shared_ptr<service::NodeSession> stream;
  size_t at = 0;
  std::string payload;
  while (at < size) {
    const uint8_t op = data[at++] % 4;
    if (op == 2) {
      if (stream != nullptr) registry.Lost(stream.get(), "its stream ended");
      stream = nullptr;
      continue;
    }
    if (!ReadPayload(data, size, &at, &payload)) break;
    if (op == 0) {
      proto::JoinNodeRequest request;
      if (!request.ParseFromString(payload)) continue;
      StatusOr<proto::JoinNodeResponse> joined = registry.Join(request);
      if (!joined.ok()) continue;
      StatusOr<std::shared_ptr<service::NodeSession>> opened = registry.Open(joined->session_id());
      if (opened.ok()) stream = *opened;
    } else if (op == 1) {
      proto::NodeReport report;
      if (stream == nullptr || !report.ParseFromString(payload)) continue;
      registry.Deliver(stream.get(), report);
    } else {
      StatusOr<std::shared_ptr<service::NodeSession>> opened = registry.Open(payload);
      if (opened.ok()) stream = *opened;
    }
  }
  if (stream != nullptr) registry.Lost(stream.get(), "its stream ended");
  registry.Unsubscribe(kRunId);
  run.Finish(registry.Nodes());
  return 0;
}
