#include "service/variable_parts.h"

#include <algorithm>

#include "proto/tensor_desc.h"
#include "runtime/host/tensor_slice.h"
#include "runtime/host/training_state.h"

namespace softwire {
namespace service {
namespace {

runtime::TensorSlice SliceOf(const proto::VariablePartChunk& chunk) {
  return runtime::TensorSlice{chunk.split_axis(), chunk.split_begin(), chunk.split_end()};
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

Status GatheredVariables::Add(const std::string& node, const proto::VariablePartChunk& chunk) {
  const std::string what = "node '" + node + "': variable '" + chunk.variable() + "'";
  Part& part =
      parts_[{chunk.variable(), chunk.split_axis(), chunk.split_begin(), chunk.split_end()}];
  if (part.first.variable().empty()) {
    part.owner = node;
    part.first = chunk;
    part.first.clear_data();
    if (chunk.part_bytes() < 0 || chunk.part_bytes() > (int64_t{1} << 40)) {
      return InvalidArgumentError(what + ": a part of " + std::to_string(chunk.part_bytes()) +
                                  " bytes");
    }
    part.bytes.assign(static_cast<size_t>(chunk.part_bytes()), '\0');
  }
  if (node != part.owner) return Status::Ok();  // A replica on another node: equal values.
  if (chunk.part_bytes() != part.first.part_bytes() || chunk.offset() < 0 ||
      chunk.offset() + static_cast<int64_t>(chunk.data().size()) > part.first.part_bytes() ||
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
  return variables;
}

}  // namespace service
}  // namespace softwire
