// Cluster specs as users write them: a text-format proto::Cluster file, or a shorthand.
//
//   4cpu           one node "node0" with four cpu devices "cpu:0" .. "cpu:3"
//   2x4cpu         two nodes "node0", "node1" of four cpu devices each
//   8sim           one node of eight sim devices
//   2x4sim:16GiB   two nodes of four sim devices with 16 GiB of memory each
//
// Kinds: cpu, sim, cuda. Memory units: B, KiB, MiB, GiB, TiB (and KB, MB, GB, TB in powers of
// ten). A cpu device gets max(1, machine_cores / devices of its node) kernel threads, so the
// devices of one node share the machine's cores. Every other figure is left 0: ClusterModel
// fills in the kind's defaults.
//
//   StatusOr<proto::Cluster> cluster = LoadClusterSpec("2x4sim:16GiB");
//   StatusOr<proto::Cluster> from_file = LoadClusterSpec("demos/cluster.pbtxt");
//
// Pure functions; errors are InvalidArgument naming the text or the file and line.
#ifndef SOFTWIRE_PLACEMENT_CLUSTER_SPEC_H_
#define SOFTWIRE_PLACEMENT_CLUSTER_SPEC_H_

#include <string>

#include "base/status.h"
#include "proto/cluster.pb.h"

namespace softwire {
namespace placement {

// Parses a shorthand; `machine_cores` divides among each node's cpu devices.
StatusOr<proto::Cluster> ParseClusterShorthand(const std::string& text, int machine_cores);

// Parses a text-format Cluster; `display_name` names it in errors ("cluster.pbtxt:3:5: ...").
StatusOr<proto::Cluster> ParseClusterText(const std::string& text, const std::string& display_name);

// What `--cluster SPEC` means: the file SPEC when it exists (or ends in .pbtxt / .txt),
// otherwise the shorthand, with this machine's hardware threads as machine_cores.
StatusOr<proto::Cluster> LoadClusterSpec(const std::string& spec);

// One node "node0" with one cpu device "cpu:0" of `cores` kernel threads and no memory budget:
// the devices of a run or a server that names no cluster ("1cpu" on a machine of `cores`).
proto::Cluster SingleCpuCluster(int cores);

// "17179869184" bytes from "16GiB"; InvalidArgument for an unknown unit or a bad number.
StatusOr<int64_t> ParseByteSize(const std::string& text);

}  // namespace placement
}  // namespace softwire

#endif  // SOFTWIRE_PLACEMENT_CLUSTER_SPEC_H_
