#include "tests/compiler/plan_evaluator.h"

#include <algorithm>
#include <memory>

#include "base/tensor_view.h"
#include "data/dataset.h"
#include "data/initializer.h"
#include "reference/kernels/reference_kernels.h"

namespace softwire {
namespace compiler {
namespace {

using reference::ReferenceTensor;

Shape ShapeOf(const proto::TensorDesc& desc) {
  return Shape(std::vector<int64_t>(desc.dims().begin(), desc.dims().end()));
}

DType DTypeOf(const proto::TensorDesc& desc) {
  return desc.dtype() == proto::DATA_TYPE_INT32 ? DType::kInt32 : DType::kFloat32;
}

ReferenceTensor Zeros(const proto::TensorDesc& desc) {
  ReferenceTensor tensor{DTypeOf(desc), ShapeOf(desc), {}};
  tensor.values.assign(static_cast<size_t>(tensor.shape.NumElements()), 0.0);
  return tensor;
}

const proto::Attribute* FindAttr(const proto::KernelDef& kernel, const std::string& name) {
  for (const proto::Attribute& attr : kernel.attr()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

std::vector<int64_t> Ints(const proto::KernelDef& kernel, const std::string& name) {
  const proto::Attribute* attr = FindAttr(kernel, name);
  CHECK(attr != nullptr) << kernel.op_type() << " lacks " << name;
  return std::vector<int64_t>(attr->ints().value().begin(), attr->ints().value().end());
}

int64_t Offset(const std::vector<int64_t>& dims, const std::vector<int64_t>& index) {
  int64_t offset = 0;
  for (size_t axis = 0; axis < dims.size(); ++axis) offset = offset * dims[axis] + index[axis];
  return offset;
}

bool Next(const std::vector<int64_t>& dims, std::vector<int64_t>* index) {
  for (int axis = static_cast<int>(dims.size()) - 1; axis >= 0; --axis) {
    if (++(*index)[axis] < dims[axis]) return true;
    (*index)[axis] = 0;
  }
  return false;
}

// The transfer and boxing ops of docs/OPS.md.
bool RunTransfer(const proto::KernelDef& kernel, const std::vector<const ReferenceTensor*>& in,
                 std::vector<ReferenceTensor>* out) {
  const std::string& op = kernel.op_type();
  if (op == "copy") {
    (*out)[0].values = in[0]->values;
  } else if (op == "slice") {
    const std::vector<int64_t> begin = Ints(kernel, "begin");
    const std::vector<int64_t>& dims = (*out)[0].shape.dims();
    std::vector<int64_t> index(dims.size(), 0);
    size_t flat = 0;
    do {
      std::vector<int64_t> at = index;
      for (size_t axis = 0; axis < at.size(); ++axis) at[axis] += begin[axis];
      (*out)[0].values[flat++] = in[0]->values[Offset(in[0]->shape.dims(), at)];
    } while (!dims.empty() && Next(dims, &index));
  } else if (op == "assemble") {
    const std::vector<int64_t> offsets = Ints(kernel, "offsets");
    const std::vector<int64_t>& shape = (*out)[0].shape.dims();
    for (size_t k = 0; k < in.size(); ++k) {
      const std::vector<int64_t>& dims = in[k]->shape.dims();
      std::vector<int64_t> index(dims.size(), 0);
      size_t flat = 0;
      do {
        std::vector<int64_t> at = index;
        for (size_t axis = 0; axis < at.size(); ++axis) at[axis] += offsets[k * shape.size() + axis];
        (*out)[0].values[Offset(shape, at)] += in[k]->values[flat++];
      } while (!dims.empty() && Next(dims, &index));
    }
  } else if (op == "flat_split") {
    size_t at = 0;
    for (ReferenceTensor& chunk : *out) {
      std::copy(in[0]->values.begin() + at, in[0]->values.begin() + at + chunk.values.size(),
                chunk.values.begin());
      at += chunk.values.size();
    }
  } else if (op == "flat_concat") {
    size_t at = 0;
    for (const ReferenceTensor* chunk : in) {
      std::copy(chunk->values.begin(), chunk->values.end(), (*out)[0].values.begin() + at);
      at += chunk->values.size();
    }
  } else {
    return false;
  }
  return true;
}

class Evaluator {
 public:
  explicit Evaluator(const proto::Plan& plan)
      : plan_(plan),
        kernels_(reference::MakeReferenceKernels()),
        values_(plan.register__size()),
        state_(plan.actor_size()) {}

  StatusOr<PlanValues> Run(int64_t steps) {
    SOFTWIRE_RETURN_IF_ERROR(Prepare());
    const int64_t per_step = plan_.schedule().pieces_per_step();
    PlanValues result;
    for (int64_t step = 0; step < steps; ++step) {
      step_ = step;
      sums_.clear();
      for (int64_t a : early_) SOFTWIRE_RETURN_IF_ERROR(Fire(a, step * per_step));
      for (int64_t piece = 0; piece < per_step; ++piece) {
        for (int64_t a : per_piece_) SOFTWIRE_RETURN_IF_ERROR(Fire(a, step * per_step + piece));
      }
      for (int64_t a : late_) SOFTWIRE_RETURN_IF_ERROR(Fire(a, step * per_step));
      for (int64_t a : updates_) SOFTWIRE_RETURN_IF_ERROR(Fire(a, step * per_step));
      std::map<std::string, double> outputs;
      for (const proto::PlanOutput& output : plan_.output()) {
        outputs[output.name()] = sums_[output.sink_actor()] / static_cast<double>(per_step);
      }
      result.outputs.push_back(outputs);
    }
    for (const proto::PlanVariable& variable : plan_.variable()) {
      ReferenceTensor whole = Zeros(variable.tensor());
      for (const proto::VariablePart& part : variable.part()) {
        const ReferenceTensor& value = values_[part.register_()];
        std::vector<int64_t> offsets(whole.shape.rank(), 0);
        if (part.split_axis() >= 0) offsets[part.split_axis()] = part.split_begin();
        const std::vector<int64_t>& dims = value.shape.dims();
        std::vector<int64_t> index(dims.size(), 0);
        size_t flat = 0;
        do {
          std::vector<int64_t> at = index;
          for (size_t axis = 0; axis < at.size(); ++axis) at[axis] += offsets[axis];
          whole.values[Offset(whole.shape.dims(), at)] = value.values[flat++];
        } while (!dims.empty() && Next(dims, &index));
      }
      result.variables[variable.name()] = whole.values;
    }
    return result;
  }

 private:
  // Sorts actors into the four groups and opens the datasets.
  Status Prepare() {
    const int64_t per_step = plan_.schedule().pieces_per_step();
    std::vector<bool> late(plan_.actor_size(), false);
    for (const proto::ActorDef& actor : plan_.actor()) {
      for (int64_t r : actor.input_register()) {
        const proto::ActorDef& producer = plan_.actor(plan_.register_(r).producer());
        if (producer.kind() == proto::ACTOR_KIND_ACCUMULATE || late[producer.id()]) {
          late[actor.id()] = actor.period() > 1;
        }
      }
      if (actor.kind() == proto::ACTOR_KIND_UPDATE) {
        updates_.push_back(actor.id());
      } else if (actor.period() == 1 || per_step == 1) {
        per_piece_.push_back(actor.id());
      } else if (late[actor.id()]) {
        late_.push_back(actor.id());
      } else {
        early_.push_back(actor.id());
      }
      if (actor.kind() == proto::ACTOR_KIND_SOURCE) {
        SOFTWIRE_ASSIGN_OR_RETURN(state_[actor.id()].dataset,
                                  data::OpenDataset(actor.source().dataset(), plan_.job_directory()));
      }
    }
    return Status::Ok();
  }

  struct ActorState {
    std::unique_ptr<data::Dataset> dataset;
    std::vector<double> optimizer;
  };

  Status Fire(int64_t id, int64_t piece) {
    const proto::ActorDef& actor = plan_.actor(id);
    std::vector<const ReferenceTensor*> inputs;
    for (int64_t r : actor.input_register()) inputs.push_back(&values_[r]);
    Status status = Work(actor, piece, inputs);
    return status.ok() ? status
                       : InternalError("actor '" + actor.name() + "': " + status.message());
  }

  Status Work(const proto::ActorDef& actor, int64_t piece,
              const std::vector<const ReferenceTensor*>& inputs) {
    switch (actor.kind()) {
      case proto::ACTOR_KIND_SOURCE:
        return Source(actor, piece);
      case proto::ACTOR_KIND_VARIABLE:
        return step_ == 0 ? Variable(actor) : Status::Ok();
      case proto::ACTOR_KIND_ACCUMULATE: {
        ReferenceTensor& sum = values_[actor.output_register(0)];
        if (piece % plan_.schedule().pieces_per_step() == 0) {
          sum = *inputs[0];
        } else {
          for (size_t e = 0; e < sum.values.size(); ++e) sum.values[e] += inputs[0]->values[e];
        }
        return Status::Ok();
      }
      case proto::ACTOR_KIND_SINK:
        sums_[actor.id()] += inputs[0]->values.at(0);
        return Status::Ok();
      case proto::ACTOR_KIND_UPDATE:
        return Update(actor, inputs);
      default:
        return Kernel(actor, inputs);
    }
  }

  Status Source(const proto::ActorDef& actor, int64_t piece) {
    std::vector<std::vector<float>> floats(actor.output_register_size());
    std::vector<std::vector<int32_t>> ints(actor.output_register_size());
    std::vector<TensorView> views;
    for (int k = 0; k < actor.output_register_size(); ++k) {
      const proto::TensorDesc& desc = plan_.register_(actor.output_register(k)).tensor();
      const size_t count = static_cast<size_t>(ShapeOf(desc).NumElements());
      void* data = nullptr;
      if (DTypeOf(desc) == DType::kInt32) {
        ints[k].resize(count);
        data = ints[k].data();
      } else {
        floats[k].resize(count);
        data = floats[k].data();
      }
      views.push_back(TensorView{DTypeOf(desc), ShapeOf(desc), data});
    }
    SOFTWIRE_RETURN_IF_ERROR(state_[actor.id()].dataset->Fill(
        piece, plan_.schedule().micro_batch_size(), actor.source().sample_begin(),
        actor.source().sample_end(), views));
    for (int k = 0; k < actor.output_register_size(); ++k) {
      ReferenceTensor& value = values_[actor.output_register(k)];
      value = Zeros(plan_.register_(actor.output_register(k)).tensor());
      for (size_t e = 0; e < value.values.size(); ++e) {
        value.values[e] = value.dtype == DType::kInt32 ? ints[k][e] : floats[k][e];
      }
    }
    return Status::Ok();
  }

  Status Variable(const proto::ActorDef& actor) {
    const proto::TensorDesc& desc = plan_.register_(actor.output_register(0)).tensor();
    std::vector<float> initial(static_cast<size_t>(ShapeOf(desc).NumElements()));
    const proto::VariableActorDef& variable = actor.variable();
    data::VariablePart part{variable.split_axis(), variable.split_begin(), variable.split_end()};
    SOFTWIRE_RETURN_IF_ERROR(data::InitializeVariable(
        variable.initializer(), ShapeOf(variable.logical_tensor()), part, plan_.job_directory(),
        TensorView{DType::kFloat32, ShapeOf(desc), initial.data()}));
    ReferenceTensor& value = values_[actor.output_register(0)];
    value = Zeros(desc);
    std::copy(initial.begin(), initial.end(), value.values.begin());
    return Status::Ok();
  }

  Status Update(const proto::ActorDef& actor, const std::vector<const ReferenceTensor*>& inputs) {
    const int64_t weight = actor.input_register(1);
    std::vector<double>& state = state_[actor.id()].optimizer;
    const int64_t elements = static_cast<int64_t>(values_[weight].values.size());
    if (state.empty()) {
      state.assign(actor.kernel().op_type() == "adam_update" ? 2 * elements : elements, 0.0);
    }
    std::vector<ReferenceTensor> outputs = {values_[weight]};
    reference::ReferenceKernelCall call{&actor.kernel(), inputs, &outputs, &state, step_ + 1};
    SOFTWIRE_RETURN_IF_ERROR(kernels_.Run(call));
    values_[weight] = outputs[0];
    return Status::Ok();
  }

  Status Kernel(const proto::ActorDef& actor, const std::vector<const ReferenceTensor*>& inputs) {
    std::vector<ReferenceTensor> outputs;
    for (const proto::TensorDesc& desc : actor.kernel().output()) outputs.push_back(Zeros(desc));
    if (!RunTransfer(actor.kernel(), inputs, &outputs)) {
      SOFTWIRE_RETURN_IF_ERROR(Physical(actor.kernel(), inputs, &outputs));
    }
    for (int k = 0; k < actor.output_register_size(); ++k) {
      values_[actor.output_register(k)] = std::move(outputs[k]);
    }
    return Status::Ok();
  }

  // A reference kernel, with the physical attributes the reference kernels do not read yet
  // applied around it.
  Status Physical(const proto::KernelDef& kernel, const std::vector<const ReferenceTensor*>& inputs,
                  std::vector<ReferenceTensor>* outputs) {
    proto::KernelDef plain = kernel;
    plain.clear_attr();
    for (const proto::Attribute& attr : kernel.attr()) {
      if (attr.name() != "divisor" && attr.name() != "index_begin" && attr.name() != "partial") {
        *plain.add_attr() = attr;
      }
    }
    const proto::Attribute* divisor = FindAttr(kernel, "divisor");
    const proto::Attribute* begin = FindAttr(kernel, "index_begin");
    if (begin != nullptr && kernel.op_type() == "embedding") {
      // Rows outside [begin, begin + V_local) read as zeros.
      const ReferenceTensor& table = *inputs[0];
      const int64_t rows = table.shape.dim(0);
      const int64_t width = table.shape.dim(1);
      for (size_t r = 0; r < inputs[1]->values.size(); ++r) {
        const int64_t row = static_cast<int64_t>(inputs[1]->values[r]) - begin->int_();
        if (row < 0 || row >= rows) continue;
        for (int64_t c = 0; c < width; ++c) {
          (*outputs)[0].values[r * width + c] = table.values[row * width + c];
        }
      }
      return Status::Ok();
    }
    if (begin != nullptr && kernel.op_type() == "embedding_grad") {
      const int64_t rows = (*outputs)[0].shape.dim(0);
      const int64_t width = (*outputs)[0].shape.dim(1);
      for (size_t r = 0; r < inputs[1]->values.size(); ++r) {
        const int64_t row = static_cast<int64_t>(inputs[1]->values[r]) - begin->int_();
        if (row < 0 || row >= rows) continue;
        for (int64_t c = 0; c < width; ++c) {
          (*outputs)[0].values[row * width + c] += inputs[0]->values[r * width + c];
        }
      }
      return Status::Ok();
    }
    if (divisor != nullptr && kernel.op_type() == "reduce_mean") plain.set_op_type("reduce_sum");
    reference::ReferenceKernelCall call{&plain, inputs, outputs, nullptr, 0};
    SOFTWIRE_RETURN_IF_ERROR(kernels_.Run(call));
    if (divisor != nullptr) {
      const double factor = kernel.op_type() == "accuracy"
                                ? static_cast<double>(inputs[1]->values.size()) / divisor->int_()
                                : 1.0 / static_cast<double>(divisor->int_());
      for (double& value : (*outputs)[0].values) value *= factor;
    }
    return Status::Ok();
  }

  const proto::Plan& plan_;
  reference::ReferenceKernelTable kernels_;
  std::vector<ReferenceTensor> values_;  // Per register: its latest fill.
  std::vector<ActorState> state_;
  std::vector<int64_t> early_;
  std::vector<int64_t> per_piece_;
  std::vector<int64_t> late_;
  std::vector<int64_t> updates_;
  std::map<int64_t, double> sums_;  // Per sink: the step's sum.
  int64_t step_ = 0;
};

}  // namespace

StatusOr<PlanValues> EvaluatePlan(const proto::Plan& plan, int64_t steps) {
  return Evaluator(plan).Run(std::min(steps, plan.schedule().steps()));
}

}  // namespace compiler
}  // namespace softwire
