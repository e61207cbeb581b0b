// A local cluster for the node agents' tests: a `softwire serve --nodes N` process and N
// `softwire node --join` processes named node0, node1, ... (one cpu device each unless told),
// on free loopback ports, their output in files of the test's directory. Every process is
// killed (SIGKILL) when the cluster goes, and when the test process dies.
//
//   LocalCluster cluster(SOFTWIRE_BINARY, TestDirectory("faults"), 3);
//   ASSERT_TRUE(cluster.Start()) << cluster.Output();
//   service::JobClient client(ClientFor(cluster.address()));
//   kill(cluster.node(1)->pid(), SIGKILL);
#ifndef SOFTWIRE_TESTS_SERVICE_LOCAL_CLUSTER_H_
#define SOFTWIRE_TESTS_SERVICE_LOCAL_CLUSTER_H_

#include <memory>
#include <string>
#include <vector>

#include "proto/node_service.pb.h"
#include "tests/service/serve_process.h"

namespace softwire {
namespace service_testing {

class LocalCluster {
 public:
  // `devices`: each node's --devices.
  LocalCluster(std::string binary, std::string directory, int nodes, std::string devices = "1cpu");

  // Starts the server on a free port, then every node, and waits up to 30 s until all have
  // joined. False with the reason in Output() otherwise.
  bool Start();
  // Starts the server again on the same port and state directory (after StopServer).
  bool RestartServer();
  // Starts node `index` (again, after it was killed).
  void StartNode(int index);
  // Waits until exactly the nodes named are live, up to `seconds`.
  bool WaitForNodes(const std::vector<std::string>& names, double seconds);

  const std::string& address() const { return address_; }
  ServeProcess* server() { return server_.get(); }
  BackgroundSoftwire* node(int index) { return nodes_[static_cast<size_t>(index)].get(); }
  std::string NodeName(int index) const { return "node" + std::to_string(index); }
  int size() const { return static_cast<int>(nodes_.size()); }
  // The live nodes' names, as ListNodes gives them; empty when the server does not answer.
  std::vector<std::string> LiveNodes() const;
  // Everything the processes printed.
  std::string Output() const;

 private:
  const std::string binary_;
  const std::string directory_;
  const std::string devices_;
  int port_ = 0;
  std::string address_;
  std::unique_ptr<ServeProcess> server_;
  std::vector<std::unique_ptr<BackgroundSoftwire>> nodes_;
  std::vector<int> starts_;  // Per node, how often it was started (log file names).
};

}  // namespace service_testing
}  // namespace softwire

#endif  // SOFTWIRE_TESTS_SERVICE_LOCAL_CLUSTER_H_
