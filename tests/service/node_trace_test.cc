// A traced job on a 2-node local cluster (`softwire serve --nodes 2`, two `softwire node`
// processes): each node sends its share's trace to the server when the run ends, and the fetched
// trace is the job's one trace, both nodes on the server's time axis. Checked with
// trace::CheckChromeTrace and through the trace model: it has firings of both nodes' actors, every
// Ready from a send actor to its recv on the other node is drawn as a flow, no recv firing starts
// before the firing of the send that fed it started (within the measured offsets' error), and the
// summary names the devices of both nodes.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/file.h"
#include "cli/testing/softwire_process.h"
#include "service/rpc/job_client.h"
#include "tests/service/local_cluster.h"
#include "tests/service/serve_process.h"
#include "trace/chrome_trace.h"
#include "trace/chrome_trace_check.h"

namespace softwire {
namespace {

using cli_testing::Contains;
using service_testing::ClientFor;
using service_testing::CommandOutcome;
using service_testing::LocalCluster;
using service_testing::TestDirectory;

CommandOutcome Softwire(const std::string& args) {
  return service_testing::RunSoftwire(SOFTWIRE_BINARY, args);
}

TEST(NodeTraceTest, APipelinedTracedJobOnTwoNodesHasOneTraceOnTheServersTimeAxis) {
  const std::string directory = TestDirectory("node_trace");
  LocalCluster cluster(SOFTWIRE_BINARY, directory, 2, "1cpu");
  ASSERT_TRUE(cluster.Start()) << cluster.Output();
  const std::string job = service_testing::WriteNpyTinyJob(directory);
  CommandOutcome submit =
      Softwire("submit " + job + " --to " + cluster.address() + " --steps 4 --pp 2 --trace");
  ASSERT_EQ(submit.exit_code, 0) << submit.output << cluster.Output();
  service::JobClient client(ClientFor(cluster.address()));
  StatusOr<std::vector<proto::JobInfo>> listed = client.ListJobs();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  const std::string trace_path = directory + "/trace.json";
  CommandOutcome fetch = Softwire("fetch " + listed->front().job_id() + " --to " +
                                  cluster.address() + " --trace " + trace_path);
  ASSERT_EQ(fetch.exit_code, 0) << fetch.output << cluster.Output();

  StatusOr<std::string> text = ReadFile(trace_path);
  ASSERT_TRUE(text.ok()) << text.status();
  StatusOr<trace::ChromeTraceCounts> counts = trace::CheckChromeTrace(*text);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_GT(counts->flows, 0);
  StatusOr<trace::TraceModel> model = trace::ParseChromeTrace(*text, trace_path);
  ASSERT_TRUE(model.ok()) << model.status();

  // Firings of every node's actors.
  const trace::PlanFacts& plan = model->plan;
  auto node_of = [&plan](int32_t actor) {
    return plan.devices[static_cast<size_t>(plan.actors[static_cast<size_t>(actor)].device)].node;
  };
  std::map<std::string, int64_t> firings_per_node;
  std::map<std::pair<int32_t, int64_t>, trace::TimeNs> started;
  for (const trace::FiringRecord& firing : model->firings) {
    ++firings_per_node[node_of(firing.actor)];
    started[{firing.actor, firing.firing}] = firing.start;
  }
  EXPECT_GT(firings_per_node["node0"], 0);
  EXPECT_GT(firings_per_node["node1"], 0);

  // Both nodes' offsets are recorded; the error bound is half a probe's round trip.
  trace::TimeNs error = 0;
  std::set<std::string> offset_nodes;
  for (const trace::NodeClockOffset& offset : model->info.clock_offsets) {
    offset_nodes.insert(offset.node);
    error += offset.error_ns;
  }
  EXPECT_EQ(offset_nodes, (std::set<std::string>{"node0", "node1"}));

  // Every send -> recv Ready is a flow across the nodes, and the order holds on the common axis.
  int64_t cross_node_flows = 0;
  for (const trace::FlowRecord& flow : model->flows) {
    const trace::ActorFacts& producer = plan.actors[static_cast<size_t>(flow.producer)];
    const trace::ActorFacts& consumer = plan.actors[static_cast<size_t>(flow.consumer)];
    if (producer.kind != "send" || consumer.kind != "recv") continue;
    ++cross_node_flows;
    EXPECT_NE(node_of(flow.producer), node_of(flow.consumer)) << producer.name;
    const trace::TimeNs send_start = started.at({flow.producer, flow.producer_firing});
    const trace::TimeNs recv_start = started.at({flow.consumer, flow.consumer_firing});
    EXPECT_GE(recv_start + error, send_start)
        << consumer.name << " firing " << flow.consumer_firing << " started "
        << (send_start - recv_start) << " ns before " << producer.name << " firing "
        << flow.producer_firing << " (error bound " << error << " ns)";
  }
  EXPECT_GT(cross_node_flows, 0) << "no Ready from a send to a recv in the trace";

  // The summary, written by the server and fetched beside the trace, names both nodes' devices.
  StatusOr<std::string> summary = ReadFile(trace_path + ".summary.txt");
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(Contains(*summary, "node0/cpu:0")) << *summary;
  EXPECT_TRUE(Contains(*summary, "node1/cpu:0")) << *summary;
  // And the timeline drawn by fetch has a row of each.
  StatusOr<std::string> svg = ReadFile(trace_path + ".svg");
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_TRUE(Contains(*svg, "node0/cpu:0"));
  EXPECT_TRUE(Contains(*svg, "node1/cpu:0"));
}

}  // namespace
}  // namespace softwire
