#include "placement/sbp.h"

#include <algorithm>

namespace softwire {
namespace placement {

std::string Sbp::ToString() const {
  switch (kind) {
    case Kind::kSplit:
      return "S(" + std::to_string(axis) + ")";
    case Kind::kPartial:
      return "P";
    case Kind::kBroadcast:
    default:
      return "B";
  }
}

std::string NdSbpToString(const NdSbp& sbp) {
  std::string text = "(";
  for (int k = 0; k < kMeshAxes; ++k) text += (k ? ", " : "") + sbp[k].ToString();
  return text + ")";
}

NdSbp AllBroadcast() {
  NdSbp sbp;
  sbp.fill(Sbp::Broadcast());
  return sbp;
}

bool HasPartial(const NdSbp& sbp) {
  return std::any_of(sbp.begin(), sbp.end(), [](const Sbp& s) { return s.is_partial(); });
}

std::vector<int> SplitAxes(const NdSbp& sbp) {
  std::vector<int> axes;
  for (const Sbp& s : sbp) {
    if (s.is_split() && std::find(axes.begin(), axes.end(), s.axis) == axes.end()) {
      axes.push_back(s.axis);
    }
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

StatusOr<Sbp> ParseSbp(const std::string& raw) {
  std::string text;
  for (char c : raw) {
    if (c != ' ') text += c;
  }
  if (text == "B") return Sbp::Broadcast();
  if (text == "P") return Sbp::Partial();
  if (text.size() >= 2 && text[0] == 'S') {
    std::string digits = text.substr(1);
    if (digits.size() >= 3 && digits.front() == '(' && digits.back() == ')') {
      digits = digits.substr(1, digits.size() - 2);
    }
    if (!digits.empty() && digits.size() <= 2 &&
        std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return Sbp::Split(std::stoi(digits));
    }
  }
  return InvalidArgumentError("'" + raw + "' is not an sbp (S(axis), B or P)");
}

int DeviceMesh::IndexOf(int device) const {
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i] == device) return static_cast<int>(i);
  }
  return -1;
}

std::string DeviceMesh::ToString() const {
  std::string text = "[";
  for (size_t i = 0; i < devices.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(devices[i]);
  }
  return text + "] as " + std::to_string(shape[0]) + "x" + std::to_string(shape[1]);
}

NdSbp Normalized(NdSbp sbp, const MeshShape& shape) {
  for (int k = 0; k < kMeshAxes; ++k) {
    if (shape[k] == 1) sbp[k] = Sbp::Broadcast();
  }
  return sbp;
}

AxisPart PartOnAxis(const NdSbp& sbp, const MeshShape& shape, const MeshCoordinate& coordinate,
                    int axis) {
  AxisPart part;
  for (int k = 0; k < kMeshAxes; ++k) {
    if (!sbp[k].is_split() || sbp[k].axis != axis) continue;
    part.parts *= shape[k];
    part.index = part.index * shape[k] + coordinate[k];
  }
  return part;
}

bool SplitsEvenly(const std::vector<int64_t>& dims, const NdSbp& sbp, const MeshShape& shape) {
  const int rank = static_cast<int>(dims.size());
  for (int k = 0; k < kMeshAxes; ++k) {
    if (!sbp[k].is_split()) continue;
    const int axis = sbp[k].axis;
    if (axis < 0 || axis >= rank) return false;
    if (dims[axis] % PartOnAxis(sbp, shape, {0, 0}, axis).parts != 0) return false;
  }
  return true;
}

std::vector<int64_t> LocalDims(const std::vector<int64_t>& dims, const NdSbp& sbp,
                               const MeshShape& shape) {
  std::vector<int64_t> local = dims;
  for (int axis : SplitAxes(sbp)) {
    if (axis < static_cast<int>(local.size())) {
      local[axis] /= PartOnAxis(sbp, shape, {0, 0}, axis).parts;
    }
  }
  return local;
}

int64_t TensorBox::NumElements() const {
  int64_t count = 1;
  for (size_t i = 0; i < begin.size(); ++i) count *= std::max<int64_t>(0, end[i] - begin[i]);
  return count;
}

bool TensorBox::empty() const {
  for (size_t i = 0; i < begin.size(); ++i) {
    if (end[i] <= begin[i]) return true;
  }
  return false;
}

TensorBox WholeBox(const std::vector<int64_t>& dims) {
  return {std::vector<int64_t>(dims.size(), 0), dims};
}

TensorBox PartBox(const std::vector<int64_t>& dims, const NdSbp& sbp, const MeshShape& shape,
                  const MeshCoordinate& coordinate) {
  TensorBox box = WholeBox(dims);
  for (int axis : SplitAxes(sbp)) {
    AxisPart part = PartOnAxis(sbp, shape, coordinate, axis);
    const int64_t extent = dims[axis];
    box.begin[axis] = part.index * extent / part.parts;
    box.end[axis] = (part.index + 1) * extent / part.parts;
  }
  return box;
}

TensorBox Intersect(const TensorBox& a, const TensorBox& b) {
  TensorBox box;
  box.begin.resize(a.begin.size());
  box.end.resize(a.begin.size());
  for (size_t i = 0; i < a.begin.size(); ++i) {
    box.begin[i] = std::max(a.begin[i], b.begin[i]);
    box.end[i] = std::min(a.end[i], b.end[i]);
  }
  return box;
}

}  // namespace placement
}  // namespace softwire
