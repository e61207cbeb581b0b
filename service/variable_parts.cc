#include "service/variable_parts.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "proto/tensor_desc.h"
#include "runtime/host/tensor_slice.h"
#include "runtime/host/training_state.h"

namespace softwire {
namespace service {
namespace {

runtime::TensorSlice SliceOf(const proto::VariablePartChunk& chunk) {
  return runtime::TensorSlice{chunk.split_axis(), chunk.split_begin(), chunk.split_end()};
}

// The bytes of a tensor of `desc`, or -1 when it is no tensor (an unknown type, a negative
// dimension) or holds more than `limit` bytes.
int64_t TensorBytesWithin(const proto::TensorDesc& desc, int64_t limit) {
  int64_t bytes = SizeOf(DTypeOf(desc));
  if (bytes == 0) return -1;
  for (int64_t dim : desc.dims()) {
    if (dim < 0) return -1;
    if (dim > 0 && bytes > limit / dim) return -1;
    bytes *= dim;
  }
  return bytes <= limit ? bytes : -1;
}

}  // namespace

StatusOr<std::vector<proto::NodeReport>> VariablePartReports(const runtime::HostedPlan& hosted,
                                                             int64_t run_id) {
  SOFTWIRE_ASSIGN_OR_RETURN(runtime::TrainingMemory memory,
                            runtime::TrainingMemory::Locate(hosted));
  std::vector<proto::NodeReport> reports;
  for (const runtime::VariablePartMemory* distinct : memory.DistinctParts()) {
    const runtime::VariablePartMemory& part = *distinct;
    const int64_t bytes = part.part_elements * SizeOf(part.dtype);
    for (int64_t offset = 0; offset < bytes || offset == 0; offset += kVariableChunkBytes) {
      proto::NodeReport report;
      proto::VariablePartChunk* chunk = report.mutable_variable_part();
      chunk->set_run_id(run_id);
      chunk->set_variable(part.variable);
      *chunk->mutable_logical() = TensorDescOf(part.dtype, part.logical);
      chunk->set_split_axis(part.slice.axis);
      chunk->set_split_begin(part.slice.begin);
      chunk->set_split_end(part.slice.end);
      chunk->set_part_bytes(bytes);
      chunk->set_offset(offset);
      const int64_t length = std::min(kVariableChunkBytes, bytes - offset);
      chunk->set_data(part.value_slots[0] + offset,
                      static_cast<size_t>(std::max<int64_t>(0, length)));
      reports.push_back(std::move(report));
      if (bytes == 0) break;
    }
  }
  return reports;
}

int64_t PlanVariableBytes(const proto::Plan& plan) {
  int64_t bytes = 0;
  for (const proto::PlanVariable& variable : plan.variable()) {
    const int64_t variable_bytes =
        TensorBytesWithin(variable.tensor(), std::numeric_limits<int64_t>::max() - bytes);
    if (variable_bytes < 0) return std::numeric_limits<int64_t>::max();
    bytes += variable_bytes;
  }
  return bytes;
}

Status GatheredVariables::Add(const std::string& node, const proto::VariablePartChunk& chunk) {
  const std::string what = "node '" + node + "': variable '" + chunk.variable() + "'";
  const auto key =
      std::make_tuple(chunk.variable(), chunk.split_axis(), chunk.split_begin(), chunk.split_end());
  if (parts_.find(key) == parts_.end()) {
    // A new part: its claims are checked before anything is kept or allocated for it.
    if (chunk.variable().empty()) return InvalidArgumentError(what + ": a part without a name");
    if (TensorBytesWithin(chunk.logical(), max_bytes_) < 0) {
      return InvalidArgumentError(what + ": a logical type that is no tensor or holds more than " +
                                  "the plan's " + std::to_string(max_bytes_) +
                                  " bytes of variables");
    }
    if (chunk.part_bytes() < 0 || chunk.part_bytes() > max_bytes_ - held_bytes_) {
      return InvalidArgumentError(what + ": a part of " + std::to_string(chunk.part_bytes()) +
                                  " bytes, past the plan's " + std::to_string(max_bytes_) +
                                  " bytes of variables");
    }
    Part& part = parts_[key];
    part.owner = node;
    part.first = chunk;
    part.first.clear_data();
    part.bytes.assign(static_cast<size_t>(chunk.part_bytes()), '\0');
    held_bytes_ += chunk.part_bytes();
  }
  Part& part = parts_[key];
  if (node != part.owner) return Status::Ok();  // A replica on another node: equal values.
  if (chunk.part_bytes() != part.first.part_bytes() || chunk.offset() < 0 ||
      chunk.offset() > part.first.part_bytes() - static_cast<int64_t>(chunk.data().size()) ||
      chunk.logical().SerializeAsString() != part.first.logical().SerializeAsString()) {
    return InvalidArgumentError(what + ": a chunk that does not fit its part");
  }
  std::copy(chunk.data().begin(), chunk.data().end(),
            part.bytes.begin() + static_cast<std::ptrdiff_t>(chunk.offset()));
  part.received += static_cast<int64_t>(chunk.data().size());
  return Status::Ok();
}

StatusOr<std::map<std::string, NpyArray>> GatheredVariables::Take() {
  std::map<std::string, NpyArray> variables;
  for (auto& [key, part] : parts_) {
    const std::string& name = std::get<0>(key);
    if (part.received != part.first.part_bytes()) {
      return FailedPreconditionError("variable '" + name + "': " + std::to_string(part.received) +
                                     " of its part's " + std::to_string(part.first.part_bytes()) +
                                     " bytes came");
    }
    NpyArray& array = variables[name];
    if (array.dtype == DType::kInvalid) {
      array.dtype = DTypeOf(part.first.logical());
      array.shape = ShapeOf(part.first.logical());
      array.data.assign(static_cast<size_t>(array.shape.NumElements() * SizeOf(array.dtype)), 0);
    }
    SOFTWIRE_RETURN_IF_ERROR(runtime::CopyPartToLogical(
        SliceOf(part.first), array.shape, SizeOf(array.dtype), part.bytes.data(),
        static_cast<int64_t>(part.bytes.size()), array.data.data(), "variable '" + name + "'"));
  }
  // Parts are disjoint: together they must cover every element of what was sent. (A variable no
  // node sent lies on sim devices, which hold no values: left out, as ReadVariables does.)
  std::map<std::string, int64_t> covered;
  for (const auto& [key, part] : parts_) {
    covered[std::get<0>(key)] += part.first.part_bytes();
  }
  for (const auto& [name, array] : variables) {
    if (covered[name] != static_cast<int64_t>(array.data.size())) {
      return FailedPreconditionError("variable '" + name + "': the nodes sent " +
                                     std::to_string(covered[name]) + " of its " +
                                     std::to_string(array.data.size()) + " bytes");
    }
  }
  parts_.clear();
  held_bytes_ = 0;
  return variables;
}

}  // namespace service
}  // namespace softwire
