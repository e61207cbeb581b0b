// Sbp: how a logical tensor lies on a device mesh (docs/PARALLELISM.md, "Sbp").
//
// A DeviceMesh arranges devices as [dp][tp] (tp fastest). An NdSbp gives one Sbp per mesh
// axis: S(a) splits tensor axis a, B broadcasts, P holds partial sums. The part a mesh
// coordinate holds is:
//   - on a tensor axis split by one or both mesh axes, the balanced slice
//     [k*n/parts, (k+1)*n/parts), where parts multiplies the extents of the mesh axes that
//     split it and k counts those coordinates with the outer (dp) axis major;
//   - every other tensor axis whole.
// With P on a mesh axis the part is a partial term: summing it over that mesh axis gives the
// true value. Only even splits are used (SplitsEvenly).
//
// Plain values, no state; every function is pure.
#ifndef SOFTWIRE_PLACEMENT_SBP_H_
#define SOFTWIRE_PLACEMENT_SBP_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace softwire {
namespace placement {

constexpr int kMeshAxes = 2;  // [dp][tp].
using MeshShape = std::array<int, kMeshAxes>;
using MeshCoordinate = std::array<int, kMeshAxes>;

struct Sbp {
  enum class Kind : uint8_t { kBroadcast, kSplit, kPartial };
  Kind kind = Kind::kBroadcast;
  int axis = 0;  // The split tensor axis; 0 unless kSplit.

  static Sbp Broadcast() { return {Kind::kBroadcast, 0}; }
  static Sbp Split(int axis) { return {Kind::kSplit, axis}; }
  static Sbp Partial() { return {Kind::kPartial, 0}; }
  bool is_broadcast() const { return kind == Kind::kBroadcast; }
  bool is_split() const { return kind == Kind::kSplit; }
  bool is_partial() const { return kind == Kind::kPartial; }
  bool operator==(const Sbp& other) const { return kind == other.kind && axis == other.axis; }
  bool operator!=(const Sbp& other) const { return !(*this == other); }

  // "S(1)", "B", "P".
  std::string ToString() const;
};

// One Sbp per mesh axis, dp first.
using NdSbp = std::array<Sbp, kMeshAxes>;
// "(S(0), B)".
std::string NdSbpToString(const NdSbp& sbp);
NdSbp AllBroadcast();
bool HasPartial(const NdSbp& sbp);
// Distinct tensor axes that `sbp` splits, sorted.
std::vector<int> SplitAxes(const NdSbp& sbp);

// "S(0)", "S0", "B" or "P" (spaces ignored); InvalidArgument otherwise.
StatusOr<Sbp> ParseSbp(const std::string& text);

// Devices of one stage (or of one device), row-major over `shape`.
struct DeviceMesh {
  std::vector<int> devices;  // Cluster device ids; size() == shape[0] * shape[1].
  MeshShape shape = {1, 1};

  int size() const { return static_cast<int>(devices.size()); }
  MeshCoordinate Coordinate(int linear) const { return {linear / shape[1], linear % shape[1]}; }
  int Linear(const MeshCoordinate& coordinate) const {
    return coordinate[0] * shape[1] + coordinate[1];
  }
  // Position of `device` in the mesh, or -1.
  int IndexOf(int device) const;
  bool operator==(const DeviceMesh& other) const {
    return devices == other.devices && shape == other.shape;
  }
  // "[0, 1, 2, 3] as 2x2".
  std::string ToString() const;
};

// `sbp` with every mesh axis of extent 1 set to B, so equal layouts compare equal.
NdSbp Normalized(NdSbp sbp, const MeshShape& shape);

// Parts tensor axis `axis` is split into, and which of them `coordinate` holds.
struct AxisPart {
  int64_t parts = 1;
  int64_t index = 0;
};
AxisPart PartOnAxis(const NdSbp& sbp, const MeshShape& shape, const MeshCoordinate& coordinate,
                    int axis);

// True when every split names an axis of `dims` whose extent its parts divide.
bool SplitsEvenly(const std::vector<int64_t>& dims, const NdSbp& sbp, const MeshShape& shape);

// The extents every mesh coordinate holds (splits must be even).
std::vector<int64_t> LocalDims(const std::vector<int64_t>& dims, const NdSbp& sbp,
                               const MeshShape& shape);

// A half-open box of a tensor: [begin[i], end[i]) on every axis.
struct TensorBox {
  std::vector<int64_t> begin;
  std::vector<int64_t> end;

  int64_t NumElements() const;
  bool empty() const;
  bool operator==(const TensorBox& other) const { return begin == other.begin && end == other.end; }
};
TensorBox WholeBox(const std::vector<int64_t>& dims);
// The box `coordinate` holds under `sbp` (P axes do not change it).
TensorBox PartBox(const std::vector<int64_t>& dims, const NdSbp& sbp, const MeshShape& shape,
                  const MeshCoordinate& coordinate);
// Intersection; empty() when they do not overlap.
TensorBox Intersect(const TensorBox& a, const TensorBox& b);

}  // namespace placement
}  // namespace softwire

#endif  // SOFTWIRE_PLACEMENT_SBP_H_
