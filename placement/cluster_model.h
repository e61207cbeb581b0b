// ClusterModel: the machines a job may use, as the cost model sees them. Built once from a
// proto::Cluster (cluster.proto): devices numbered node by node with every figure the cluster
// left 0 replaced by its kind's default, and a dense table of links between every pair of
// devices (listed links first, then the intra- and inter-node defaults).
//
//   StatusOr<ClusterModel> model = ClusterModel::Build(cluster);
//   LinkFigures link = model->Link(0, 5);   // bandwidth (B/s) and latency (s)
//
// Defaults (docs/PARALLELISM.md, "Cluster"): cpu 100 GFLOP/s and 20 GB/s; sim 100 TFLOP/s,
// 2 TB/s and 16 GiB; cuda 20 TFLOP/s and 1.5 TB/s; bf16 products at twice the rate where the
// kind has native bf16 (DeviceKindDefaults::bf16_speedup); links within a node 50 GB/s and 2 us,
// between nodes 10 GB/s and 20 us.
//
// Immutable after Build, so it may be shared by threads. Build fails with InvalidArgument
// "cluster: ..." naming the node, device or link at fault.
#ifndef SOFTWIRE_PLACEMENT_CLUSTER_MODEL_H_
#define SOFTWIRE_PLACEMENT_CLUSTER_MODEL_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "proto/cluster.pb.h"

namespace softwire {
namespace placement {

// Figures of one kind of device when the cluster leaves them 0.
struct DeviceKindDefaults {
  double flops = 0;             // FLOP/s.
  double memory_bandwidth = 0;  // Bytes/s.
  int64_t memory_bytes = 0;     // 0: unlimited.
  // bf16 products' rate over `flops`: 2 where the kind has native bf16 (sim, cuda, and cpu
  // when `cpu_native_bf16`), 1 where bf16 products are widened to float32.
  double bf16_speedup = 1;
};
// `cpu_native_bf16`: whether the cpu devices run bf16 products natively. The compiler decides
// it once (CompileOptions::native_bf16, else the compiling machine's cpu), for the cost model
// and for `--precision auto` alike; the model never asks the machine itself.
DeviceKindDefaults DefaultsFor(proto::DeviceKind kind, bool cpu_native_bf16);

// Link defaults when the cluster lists none for a pair.
constexpr double kIntraNodeBandwidth = 50e9;
constexpr double kIntraNodeLatency = 2e-6;
constexpr double kInterNodeBandwidth = 10e9;
constexpr double kInterNodeLatency = 20e-6;

struct LinkFigures {
  double bandwidth = 0;  // Bytes per second; infinite for a device and itself.
  double latency = 0;    // Seconds before the first byte arrives.
};

// One device of the model: its spec with flops, bf16_flops, memory_bandwidth, memory_bytes (sim)
// and cores never 0.
struct ModelDevice {
  int id = -1;  // Index in the model, node by node.
  std::string node;
  int node_index = -1;  // Position of `node` in the cluster.
  proto::DeviceSpec spec;

  // "node0/cpu:0".
  std::string FullName() const { return node + "/" + spec.name(); }
};

class ClusterModel {
 public:
  // Validates the cluster (named, unique nodes and devices with a kind; no negative figures;
  // links naming known nodes or devices with positive bandwidth) and fills in defaults.
  // `cpu_native_bf16` as for DefaultsFor.
  static StatusOr<ClusterModel> Build(const proto::Cluster& cluster, bool cpu_native_bf16 = false);

  int device_count() const { return static_cast<int>(devices_.size()); }
  const ModelDevice& device(int id) const;
  const std::vector<ModelDevice>& devices() const { return devices_; }

  // The link between two devices (symmetric). A device and itself: infinite bandwidth, no
  // latency.
  const LinkFigures& Link(int from, int to) const;

 private:
  ClusterModel() = default;

  std::vector<ModelDevice> devices_;
  std::vector<LinkFigures> links_;  // device_count^2, row = from.
};

}  // namespace placement
}  // namespace softwire

#endif  // SOFTWIRE_PLACEMENT_CLUSTER_MODEL_H_
