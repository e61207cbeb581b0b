#include "runtime/host/training_state.h"

#include <set>
#include <tuple>
#include <vector>

#include "proto/tensor_desc.h"

namespace softwire {
namespace runtime {
namespace {

std::string VariableWhat(const std::string& name) {
  return "variable '" + name + "'";
}

NpyArray ZeroArray(DType dtype, const Shape& shape) {
  NpyArray array;
  array.dtype = dtype;
  array.shape = shape;
  array.data.assign(static_cast<size_t>(shape.NumElements() * SizeOf(dtype)), 0);
  return array;
}

// [k, logical dims...]: the logical layout of k floats of state per element.
Shape StateShape(int64_t floats_per_element, const Shape& logical) {
  std::vector<int64_t> dims = {floats_per_element};
  dims.insert(dims.end(), logical.dims().begin(), logical.dims().end());
  return Shape(dims);
}

// Bytes of one float per element of the part: the optimizer keeps its k arrays one after another.
int64_t StateStride(const VariablePartMemory& part) {
  return part.part_elements * static_cast<int64_t>(sizeof(float));
}

// Whether the host reads and writes the part's memory directly (cpu) or through copies (cuda).
bool InHostMemory(const VariablePartMemory& part) {
  return part.device == nullptr || part.device->kind() == proto::DEVICE_KIND_CPU;
}

// `bytes` at `address` of the part's device, readable by the host: the address itself, or a
// copy in `staging`.
StatusOr<const char*> ReadableCopy(const VariablePartMemory& part, const char* address,
                                   int64_t bytes, std::vector<char>* staging) {
  if (InHostMemory(part)) return address;
  staging->resize(static_cast<size_t>(bytes));
  SOFTWIRE_RETURN_IF_ERROR(part.device->CopyToHost(address, staging->data(), bytes));
  return static_cast<const char*>(staging->data());
}

// Calls write(destination) with host memory standing for `bytes` at `address` of the part's
// device, and copies it back to the device afterwards when it was a staging copy.
template <typename Write>
Status WriteThroughHost(const VariablePartMemory& part, char* address, int64_t bytes,
                        const Write& write) {
  if (InHostMemory(part)) return write(address);
  std::vector<char> staging(static_cast<size_t>(bytes));
  SOFTWIRE_RETURN_IF_ERROR(part.device->CopyToHost(address, staging.data(), bytes));
  SOFTWIRE_RETURN_IF_ERROR(write(staging.data()));
  return part.device->CopyFromHost(staging.data(), address, bytes);
}

}  // namespace

StatusOr<TrainingMemory> TrainingMemory::Locate(const HostedPlan& hosted) {
  const proto::Plan& plan = hosted.plan();
  TrainingMemory memory;
  std::map<int64_t, size_t> part_of_register;  // Variable register -> index in parts_.
  for (int64_t id : hosted.actors()) {
    const proto::ActorDef& actor = plan.actor(static_cast<int>(id));
    if (actor.kind() != proto::ACTOR_KIND_VARIABLE || actor.output_register_size() != 1) continue;
    const int64_t reg = actor.output_register(0);
    const std::vector<char*>& slots = hosted.register_slots()[static_cast<size_t>(reg)];
    if (slots.empty() || slots[0] == nullptr) continue;  // A sim device's part: no memory.
    const proto::VariableActorDef& variable = actor.variable();
    VariablePartMemory part;
    part.variable = variable.variable();
    part.logical = ShapeOf(variable.logical_tensor());
    part.dtype = DTypeOf(variable.logical_tensor());
    if (part.dtype == DType::kInvalid) {
      return InvalidArgumentError(VariableWhat(part.variable) + ": no supported dtype");
    }
    part.slice = TensorSlice{variable.split_axis(), variable.split_begin(), variable.split_end()};
    part.value_slots = slots;
    part.value_bytes = plan.register_def(static_cast<int>(reg)).bytes_per_slot();
    part.device = hosted.devices()[static_cast<size_t>(actor.device())];
    SOFTWIRE_ASSIGN_OR_RETURN(int64_t part_bytes,
                              SlicePartBytes(part.slice, part.logical, SizeOf(part.dtype),
                                             part.value_bytes, VariableWhat(part.variable)));
    part.part_elements = part_bytes / SizeOf(part.dtype);
    part_of_register[reg] = memory.parts_.size();
    memory.parts_.push_back(std::move(part));
  }
  for (int64_t id : hosted.actors()) {
    const proto::ActorDef& actor = plan.actor(static_cast<int>(id));
    if (actor.kind() != proto::ACTOR_KIND_UPDATE || actor.input_register_size() < 2) continue;
    auto found = part_of_register.find(actor.input_register(1));
    if (found == part_of_register.end()) continue;  // Its variable is on a sim device.
    VariablePartMemory& part = memory.parts_[found->second];
    part.update_actor = id;
    if (actor.state_bytes() == 0) continue;
    const int64_t exact = part.part_elements * static_cast<int64_t>(sizeof(float));
    if (exact <= 0 || actor.state_bytes() % exact != 0) {
      return InvalidArgumentError("update actor '" + actor.name() + "': its state of " +
                                  std::to_string(actor.state_bytes()) +
                                  " bytes is not a whole number of floats per element of " +
                                  VariableWhat(part.variable));
    }
    part.state_floats_per_element = actor.state_bytes() / exact;
    const DeviceArena* arena = hosted.arenas()[static_cast<size_t>(actor.device())].get();
    if (arena == nullptr) continue;
    SOFTWIRE_ASSIGN_OR_RETURN(part.state,
                              arena->Region(actor.state_offset(), actor.state_bytes(),
                                            "update actor '" + actor.name() + "' state"));
  }
  return memory;
}

void TrainingMemory::NewLogicalArrays(TrainingState* state) const {
  for (const VariablePartMemory& part : parts_) {
    if (state->variables.count(part.variable) == 0) {
      state->variables[part.variable] = ZeroArray(part.dtype, part.logical);
    }
    if (part.state != nullptr && state->optimizer_state.count(part.variable) == 0) {
      state->optimizer_state[part.variable] =
          ZeroArray(DType::kFloat32, StateShape(part.state_floats_per_element, part.logical));
    }
  }
}

std::vector<const VariablePartMemory*> TrainingMemory::DistinctParts() const {
  std::set<std::tuple<std::string, int, int64_t, int64_t>> seen;
  std::vector<const VariablePartMemory*> distinct;
  for (const VariablePartMemory& part : parts_) {
    if (seen.insert({part.variable, part.slice.axis, part.slice.begin, part.slice.end}).second) {
      distinct.push_back(&part);
    }
  }
  return distinct;
}

Status TrainingMemory::CopyPart(const VariablePartMemory& part, TrainingState* state) const {
  const std::string what = VariableWhat(part.variable);
  NpyArray& value = state->variables.at(part.variable);
  std::vector<char> staging;
  SOFTWIRE_ASSIGN_OR_RETURN(const char* slot,
                            ReadableCopy(part, part.value_slots[0], part.value_bytes, &staging));
  SOFTWIRE_RETURN_IF_ERROR(CopyPartToLogical(part.slice, part.logical, SizeOf(part.dtype), slot,
                                             part.value_bytes, value.data.data(), what));
  if (part.state == nullptr) return Status::Ok();
  NpyArray& moments = state->optimizer_state.at(part.variable);
  const int64_t logical_bytes = part.logical.NumElements() * static_cast<int64_t>(sizeof(float));
  SOFTWIRE_ASSIGN_OR_RETURN(
      const char* optimizer_state,
      ReadableCopy(part, part.state, part.state_floats_per_element * StateStride(part), &staging));
  for (int64_t k = 0; k < part.state_floats_per_element; ++k) {
    SOFTWIRE_RETURN_IF_ERROR(CopyPartToLogical(
        part.slice, part.logical, sizeof(float), optimizer_state + k * StateStride(part),
        StateStride(part), moments.data.data() + k * logical_bytes, what + " optimizer state"));
  }
  return Status::Ok();
}

StatusOr<TrainingState> TrainingMemory::Read(int64_t step) const {
  TrainingState state;
  state.step = step;
  NewLogicalArrays(&state);
  for (const VariablePartMemory* part : DistinctParts()) {
    SOFTWIRE_RETURN_IF_ERROR(CopyPart(*part, &state));
  }
  return state;
}

Status RestoreTrainingState(const TrainingState& state, HostedPlan* hosted) {
  SOFTWIRE_ASSIGN_OR_RETURN(TrainingMemory memory, TrainingMemory::Locate(*hosted));
  for (const VariablePartMemory& part : memory.parts()) {
    const std::string what = VariableWhat(part.variable);
    auto value = state.variables.find(part.variable);
    if (value == state.variables.end()) {
      return InvalidArgumentError(what + " is not in the saved state");
    }
    if (value->second.dtype != part.dtype || !(value->second.shape == part.logical)) {
      return InvalidArgumentError(what + " is saved as " +
                                  std::string(DTypeName(value->second.dtype)) + " " +
                                  value->second.shape.ToString() + ", the job has " +
                                  DTypeName(part.dtype) + " " + part.logical.ToString());
    }
    for (char* slot : part.value_slots) {
      SOFTWIRE_RETURN_IF_ERROR(WriteThroughHost(part, slot, part.value_bytes, [&](char* bytes) {
        return CopyLogicalToPart(part.slice, part.logical, SizeOf(part.dtype),
                                 value->second.data.data(), bytes, part.value_bytes, what);
      }));
    }
    if (part.state == nullptr) continue;
    auto moments = state.optimizer_state.find(part.variable);
    const Shape expected = StateShape(part.state_floats_per_element, part.logical);
    if (moments == state.optimizer_state.end() || !(moments->second.shape == expected) ||
        moments->second.dtype != DType::kFloat32) {
      return InvalidArgumentError(
          what + ": the saved optimizer state " +
          (moments == state.optimizer_state.end() ? std::string("is missing")
                                                  : "is " + moments->second.shape.ToString()) +
          ", the job's optimizer keeps float32 " + expected.ToString() + " (another optimizer?)");
    }
    const int64_t logical_bytes = part.logical.NumElements() * static_cast<int64_t>(sizeof(float));
    SOFTWIRE_RETURN_IF_ERROR(WriteThroughHost(
        part, part.state, part.state_floats_per_element * StateStride(part), [&](char* bytes) {
          for (int64_t k = 0; k < part.state_floats_per_element; ++k) {
            SOFTWIRE_RETURN_IF_ERROR(CopyLogicalToPart(
                part.slice, part.logical, sizeof(float),
                moments->second.data.data() + k * logical_bytes, bytes + k * StateStride(part),
                StateStride(part), what + " optimizer state"));
          }
          return Status::Ok();
        }));
  }
  return hosted->ContinueFrom(state.step);
}

}  // namespace runtime
}  // namespace softwire
