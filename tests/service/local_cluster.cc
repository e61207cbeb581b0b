#include "tests/service/local_cluster.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "base/file.h"

namespace softwire {
namespace service_testing {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

LocalCluster::LocalCluster(std::string binary, std::string directory, int nodes,
                           std::string devices)
    : binary_(std::move(binary)),
      directory_(std::move(directory)),
      devices_(std::move(devices)),
      nodes_(static_cast<size_t>(nodes)),
      starts_(static_cast<size_t>(nodes), 0) {}

bool LocalCluster::Start() {
  port_ = FreeLoopbackPort();
  if (!RestartServer()) return false;
  for (int i = 0; i < size(); ++i) StartNode(i);
  std::vector<std::string> names;
  for (int i = 0; i < size(); ++i) names.push_back(NodeName(i));
  return WaitForNodes(names, 30);
}

bool LocalCluster::RestartServer() {
  const std::string listen = "127.0.0.1:" + std::to_string(port_);
  server_ = std::make_unique<ServeProcess>(
      binary_, std::vector<std::string>{"--listen", listen, "--nodes", std::to_string(size())},
      directory_ + "/state");
  if (!server_->Start()) return false;
  address_ = server_->address();
  return true;
}

void LocalCluster::StartNode(int index) {
  const size_t i = static_cast<size_t>(index);
  const std::string log =
      directory_ + "/" + NodeName(index) + "." + std::to_string(++starts_[i]) + ".log";
  nodes_[i].reset();  // Kills a previous one that still runs.
  nodes_[i] = std::make_unique<BackgroundSoftwire>(
      binary_,
      "node --join 127.0.0.1:" + std::to_string(port_) + " --name " + NodeName(index) +
          " --devices " + devices_,
      log);
}

std::vector<std::string> LocalCluster::LiveNodes() const {
  service::JobClient client(ClientFor(address_));
  StatusOr<proto::ListNodesResponse> nodes = client.ListNodes();
  std::vector<std::string> names;
  if (!nodes.ok()) return names;
  for (const proto::NodeInfo& node : nodes->node()) names.push_back(node.node().name());
  std::sort(names.begin(), names.end());
  return names;
}

bool LocalCluster::WaitForNodes(const std::vector<std::string>& names, double seconds) {
  std::vector<std::string> wanted = names;
  std::sort(wanted.begin(), wanted.end());
  const Clock::time_point give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                       std::chrono::duration<double>(seconds));
  while (Clock::now() < give_up) {
    if (LiveNodes() == wanted) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string LocalCluster::Output() const {
  std::string text = server_ ? "server:\n" + server_->Output() : "";
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i]) text += NodeName(static_cast<int>(i)) + ":\n" + nodes_[i]->Output();
  }
  return text;
}

}  // namespace service_testing
}  // namespace softwire
