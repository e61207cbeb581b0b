#include "service/node_registry.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "plan/labels.h"

namespace softwire {
namespace service {
namespace {

// The run a report is about; 0 for reports about the node (heartbeats, probe replies).
int64_t RunIdOf(const proto::NodeReport& report) {
  switch (report.report_case()) {
    case proto::NodeReport::kAck:
      return report.ack().run_id();
    case proto::NodeReport::kValues:
      return report.values().run_id();
    case proto::NodeReport::kEnded:
      return report.ended().run_id();
    case proto::NodeReport::kVariablePart:
      return report.variable_part().run_id();
    case proto::NodeReport::kTrace:
      return report.trace().run_id();
    case proto::NodeReport::kCheckpointSent:
      return report.checkpoint_sent().run_id();
    default:
      return 0;
  }
}

using Clock = std::chrono::steady_clock;

constexpr int kQuickProbes = 8;
constexpr std::chrono::milliseconds kQuickProbeGap{100};
constexpr std::chrono::seconds kProbeGap{5};
constexpr std::chrono::milliseconds kWatchPeriod{100};
// Probe replies beyond these are ignored: a round trip over a minute answers no live probe,
// and an offset over 2^60 ns (36 years) is no clock's; both bound the offsets traces are moved
// by (service/node_traces.h), so that moving them cannot overflow.
constexpr std::chrono::nanoseconds kMaxProbeRoundTrip = std::chrono::minutes(1);
constexpr double kMaxClockOffsetNs = 1152921504606846976.0;  // 2^60.

int64_t NowNanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

double Seconds(Clock::duration duration) {
  return std::chrono::duration<double>(duration).count();
}

// InvalidArgument naming what is wrong with a joining node's description.
Status CheckNodeSpec(const proto::NodeSpec& node) {
  if (node.name().empty()) return InvalidArgumentError("a joining node must have a name");
  if (node.name().find('/') != std::string::npos) {
    return InvalidArgumentError("node name '" + node.name() + "' must not contain '/'");
  }
  if (node.device_size() == 0) {
    return InvalidArgumentError("node '" + node.name() + "' joined without devices");
  }
  std::set<std::string> names;
  for (const proto::DeviceSpec& device : node.device()) {
    if (device.name().empty() || device.name().find('/') != std::string::npos) {
      return InvalidArgumentError("node '" + node.name() + "': device '" + device.name() +
                                  "' is not named 'KIND:INDEX'");
    }
    if (!names.insert(device.name()).second) {
      return InvalidArgumentError("node '" + node.name() + "' names device '" + device.name() +
                                  "' twice");
    }
  }
  return Status::Ok();
}

}  // namespace

struct NodeRegistry::Node {
  proto::JoinNodeRequest joined;
  std::shared_ptr<NodeSession> session;
  bool live = false;
  bool opened = false;  // Its stream opened.
  Clock::time_point last_heard;
  // Clock probes.
  int64_t probes_sent = 0;
  Clock::time_point last_probe;
  int64_t probes_answered = 0;
  double offset_seconds = 0;
  double round_trip_seconds = std::numeric_limits<double>::infinity();
  proto::NodeHeartbeat heartbeat;  // The last one.
};

// NodeSession.

bool NodeSession::NextCommand(std::chrono::milliseconds timeout, proto::NodeCommand* command,
                              bool* closed) {
  const Clock::time_point deadline = Clock::now() + timeout;
  MutexLock lock(&mutex_);
  while (queue_.empty() && !closed_) {
    if (!changed_.WaitUntil(&lock, deadline)) break;
  }
  *closed = queue_.empty() && closed_;
  if (queue_.empty()) return false;
  *command = std::move(queue_.front());
  queue_.pop_front();
  return true;
}

void NodeSession::Push(proto::NodeCommand command) {
  MutexLock lock(&mutex_);
  if (closed_) return;
  queue_.push_back(std::move(command));
  changed_.NotifyAll();
}

void NodeSession::Close() {
  MutexLock lock(&mutex_);
  closed_ = true;
  queue_.clear();
  changed_.NotifyAll();
}

// NodeRegistry.

NodeRegistry::NodeRegistry(NodeRegistryOptions options) : options_(options) {
  watchdog_ = std::thread(&NodeRegistry::Watch, this);
}

NodeRegistry::~NodeRegistry() {
  {
    MutexLock lock(&mutex_);
    stopping_ = true;
    for (auto& node : nodes_) {
      if (node->session) node->session->Close();
    }
    changed_.NotifyAll();
  }
  watchdog_.join();
}

StatusOr<proto::JoinNodeResponse> NodeRegistry::Join(const proto::JoinNodeRequest& request) {
  if (request.protocol_version() != options_.protocol_version) {
    return FailedPreconditionError(
        "node '" + request.node().name() + "' speaks node protocol version " +
        std::to_string(request.protocol_version()) + " but this server speaks version " +
        std::to_string(options_.protocol_version) + "; run the same softwire on both");
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckNodeSpec(request.node()));
  proto::JoinNodeResponse response;
  {
    MutexLock lock(&mutex_);
    if (stopping_) return UnavailableError("the server is stopping");
    Node* node = FindLocked(request.node().name());
    if (node != nullptr && node->live) {
      return UnavailableError("a node named '" + request.node().name() +
                              "' has joined already (pid " + std::to_string(node->joined.pid()) +
                              ")");
    }
    if (node == nullptr) {
      nodes_.push_back(std::make_unique<Node>());
      node = nodes_.back().get();
    }
    *node = Node();
    node->joined = request;
    node->live = true;
    node->last_heard = Clock::now();
    const std::string session_id = request.node().name() + "-" + std::to_string(++last_session_);
    node->session =
        std::shared_ptr<NodeSession>(new NodeSession(request.node().name(), session_id));
    response.set_session_id(session_id);
    response.set_protocol_version(options_.protocol_version);
    response.set_heartbeat_period_seconds(
        std::chrono::duration<double>(options_.heartbeat_period).count());
    response.set_heartbeat_timeout_seconds(
        std::chrono::duration<double>(options_.heartbeat_timeout).count());
  }
  LOG(INFO) << "node '" << request.node().name() << "' joined from " << request.node().address()
            << " (pid " << request.pid() << ", " << request.node().device_size()
            << " devices, data plane '" << request.data_plane_address() << "')";
  NotifyMembership();
  return response;
}

StatusOr<std::shared_ptr<NodeSession>> NodeRegistry::Open(const std::string& session_id) {
  MutexLock lock(&mutex_);
  for (auto& node : nodes_) {
    if (node->session && node->session->session_id() == session_id) {
      if (!node->live) return NotFoundError("session '" + session_id + "' was lost; join again");
      node->opened = true;
      node->last_heard = Clock::now();
      return node->session;
    }
  }
  return NotFoundError("no session '" + session_id + "'; join first");
}

void NodeRegistry::Deliver(NodeSession* session, const proto::NodeReport& report) {
  RunListener* listener = nullptr;
  {
    MutexLock lock(&mutex_);
    Node* node = FindLocked(session->node());
    if (node == nullptr || !node->live || node->session.get() != session) return;
    node->last_heard = Clock::now();
    int64_t run_id = 0;
    switch (report.report_case()) {
      case proto::NodeReport::kHeartbeat:
        node->heartbeat = report.heartbeat();
        return;
      case proto::NodeReport::kProbeReply:
        RecordProbeLocked(node, report.probe_reply());
        return;
      default:
        run_id = RunIdOf(report);
        if (run_id == 0) return;
        break;
    }
    auto found = listeners_.find(run_id);
    if (found == listeners_.end()) return;  // A run that ended: late news.
    listener = found->second;
    ++calls_in_progress_[run_id];
  }
  listener->OnReport(session->node(), report);
  MutexLock lock(&mutex_);
  --calls_in_progress_[RunIdOf(report)];
  changed_.NotifyAll();
}

void NodeRegistry::Lost(NodeSession* session, const std::string& reason) {
  {
    MutexLock lock(&mutex_);
    Node* node = FindLocked(session->node());
    if (node == nullptr || !MarkLostLocked(node, session->session_id())) return;
  }
  NotifyLost(session->node(), reason);
}

bool NodeRegistry::MarkLostLocked(Node* node, const std::string& session_id) {
  if (!node->live || node->session == nullptr || node->session->session_id() != session_id) {
    return false;
  }
  node->live = false;
  node->session->Close();
  return true;
}

void NodeRegistry::NotifyLost(const std::string& node, const std::string& reason) {
  LOG(WARNING) << "node '" << node << "' lost: " << reason;
  std::vector<std::pair<int64_t, RunListener*>> listeners;
  {
    MutexLock lock(&mutex_);
    for (auto& [run_id, listener] : listeners_) {
      listeners.emplace_back(run_id, listener);
      ++calls_in_progress_[run_id];
    }
  }
  for (auto& [run_id, listener] : listeners) listener->OnNodeLost(node, reason);
  {
    MutexLock lock(&mutex_);
    for (auto& [run_id, listener] : listeners) --calls_in_progress_[run_id];
    changed_.NotifyAll();
  }
  NotifyMembership();
}

void NodeRegistry::NotifyMembership() {
  std::function<void()> membership;
  {
    MutexLock lock(&mutex_);
    if (!membership_) return;
    membership = membership_;
    ++membership_calls_;
  }
  membership();
  MutexLock lock(&mutex_);
  --membership_calls_;
  changed_.NotifyAll();
}

Status NodeRegistry::Send(const std::string& name, proto::NodeCommand command) {
  MutexLock lock(&mutex_);
  Node* node = FindLocked(name);
  if (node == nullptr || !node->live) {
    return UnavailableError("node '" + name + "' is not joined");
  }
  node->session->Push(std::move(command));
  return Status::Ok();
}

void NodeRegistry::Subscribe(int64_t run_id, RunListener* listener) {
  MutexLock lock(&mutex_);
  listeners_[run_id] = listener;
}

void NodeRegistry::Unsubscribe(int64_t run_id) {
  MutexLock lock(&mutex_);
  listeners_.erase(run_id);
  // A call may have taken the listener before it was erased: wait it out.
  while (calls_in_progress_[run_id] > 0) changed_.Wait(&lock);
  calls_in_progress_.erase(run_id);
}

void NodeRegistry::SetMembershipListener(std::function<void()> listener) {
  MutexLock lock(&mutex_);
  membership_ = std::move(listener);
  while (membership_calls_ > 0) changed_.Wait(&lock);
}

int64_t NodeRegistry::NewRunId() {
  MutexLock lock(&mutex_);
  return ++last_run_id_;
}

proto::Cluster NodeRegistry::LiveCluster() const {
  proto::Cluster cluster;
  MutexLock lock(&mutex_);
  for (const auto& node : nodes_) {
    if (node->live) *cluster.add_node() = node->joined.node();
  }
  std::sort(cluster.mutable_node()->begin(), cluster.mutable_node()->end(),
            [](const proto::NodeSpec& a, const proto::NodeSpec& b) { return a.name() < b.name(); });
  return cluster;
}

proto::Cluster NodeRegistry::KnownCluster() const {
  proto::Cluster cluster;
  MutexLock lock(&mutex_);
  for (const auto& node : nodes_) *cluster.add_node() = node->joined.node();
  std::sort(cluster.mutable_node()->begin(), cluster.mutable_node()->end(),
            [](const proto::NodeSpec& a, const proto::NodeSpec& b) { return a.name() < b.name(); });
  return cluster;
}

int NodeRegistry::LiveNodes() const {
  MutexLock lock(&mutex_);
  return static_cast<int>(
      std::count_if(nodes_.begin(), nodes_.end(), [](const auto& node) { return node->live; }));
}

std::vector<proto::NodeInfo> NodeRegistry::Nodes() const {
  std::vector<proto::NodeInfo> nodes;
  const Clock::time_point now = Clock::now();
  MutexLock lock(&mutex_);
  for (const auto& node : nodes_) {
    if (!node->live) continue;
    proto::NodeInfo info;
    *info.mutable_node() = node->joined.node();
    info.set_data_plane_address(node->joined.data_plane_address());
    info.set_pid(node->joined.pid());
    info.set_protocol_version(node->joined.protocol_version());
    info.set_heartbeat_age_seconds(Seconds(now - node->last_heard));
    info.set_clock_probes(node->probes_answered);
    if (node->probes_answered > 0) {
      info.set_clock_offset_seconds(node->offset_seconds);
      info.set_clock_round_trip_seconds(node->round_trip_seconds);
    }
    *info.mutable_run_id() = node->heartbeat.run_id();
    nodes.push_back(std::move(info));
  }
  return nodes;
}

std::string NodeRegistry::DataPlaneAddress(const std::string& name) const {
  MutexLock lock(&mutex_);
  const Node* node = FindLocked(name);
  return node == nullptr ? "" : node->joined.data_plane_address();
}

int64_t NodeRegistry::AllocatedBytes(const std::string& name, const std::string& device) const {
  MutexLock lock(&mutex_);
  const Node* node = FindLocked(name);
  if (node == nullptr || !node->live) return 0;
  auto found = node->heartbeat.allocated_bytes().find(device);
  return found == node->heartbeat.allocated_bytes().end() ? 0 : found->second;
}

bool NodeRegistry::IsLive(const std::string& name) const {
  MutexLock lock(&mutex_);
  const Node* node = FindLocked(name);
  return node != nullptr && node->live;
}

NodeRegistry::Node* NodeRegistry::FindLocked(const std::string& name) {
  for (auto& node : nodes_) {
    if (node->joined.node().name() == name) return node.get();
  }
  return nullptr;
}

const NodeRegistry::Node* NodeRegistry::FindLocked(const std::string& name) const {
  for (const auto& node : nodes_) {
    if (node->joined.node().name() == name) return node.get();
  }
  return nullptr;
}

void NodeRegistry::RecordProbeLocked(Node* node, const proto::ClockProbeReply& reply) {
  const int64_t received = NowNanoseconds();
  // A reply echoes the send time of a probe of this process: one from the future, from before
  // this process's clock began or older than a minute is no answer to one (and would overflow).
  if (reply.server_send_ns() < 0 || reply.server_send_ns() > received) return;
  const int64_t round_trip = received - reply.server_send_ns();
  if (round_trip > kMaxProbeRoundTrip.count()) return;
  // NTP's estimate: the node answered halfway through the round trip.
  const double midpoint = (static_cast<double>(reply.server_send_ns()) + received) / 2;
  const double offset_ns = static_cast<double>(reply.node_time_ns()) - midpoint;
  if (std::abs(offset_ns) > kMaxClockOffsetNs) return;  // No clock is that far off.
  ++node->probes_answered;
  const double round_trip_seconds = static_cast<double>(round_trip) * 1e-9;
  if (round_trip_seconds >= node->round_trip_seconds) return;
  node->round_trip_seconds = round_trip_seconds;
  node->offset_seconds = offset_ns * 1e-9;
}

void NodeRegistry::Watch() {
  MutexLock lock(&mutex_);
  while (!stopping_) {
    changed_.WaitUntil(&lock, Clock::now() + kWatchPeriod);
    if (stopping_) break;
    const Clock::time_point now = Clock::now();
    std::vector<std::pair<std::string, std::string>> lost;
    for (auto& node : nodes_) {
      if (!node->live) continue;
      const Clock::duration silence = now - node->last_heard;
      if (silence >= options_.heartbeat_timeout) {
        char seconds[32];
        std::snprintf(seconds, sizeof(seconds), "%.1f", Seconds(silence));
        const std::string reason =
            node->opened ? std::string("no heartbeat for ") + seconds + " s"
                         : std::string("it joined but opened no session in ") + seconds + " s";
        if (MarkLostLocked(node.get(), node->session->session_id())) {
          lost.emplace_back(node->joined.node().name(), reason);
        }
        continue;
      }
      if (!node->opened) continue;
      const Clock::duration gap = node->probes_sent < kQuickProbes ? Clock::duration(kQuickProbeGap)
                                                                   : Clock::duration(kProbeGap);
      if (node->probes_sent == 0 || now - node->last_probe >= gap) {
        proto::NodeCommand probe;
        probe.mutable_probe()->set_probe_id(++last_probe_);
        probe.mutable_probe()->set_server_send_ns(NowNanoseconds());
        node->session->Push(std::move(probe));
        ++node->probes_sent;
        node->last_probe = now;
      }
    }
    if (lost.empty()) continue;
    lock.Unlock();
    for (const auto& [name, reason] : lost) NotifyLost(name, reason);
    lock.Lock();
  }
}

}  // namespace service
}  // namespace softwire
