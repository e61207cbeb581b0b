#include "compiler/passes/job_declarations.h"

#include <string>
#include <vector>

#include "proto/tensor_desc.h"

namespace softwire {
namespace compiler {
namespace {

std::string DimsText(const google::protobuf::RepeatedField<int64_t>& dims) {
  return Shape(std::vector<int64_t>(dims.begin(), dims.end())).ToString();
}

bool AllPositive(const google::protobuf::RepeatedField<int64_t>& dims) {
  for (int64_t dim : dims) {
    if (dim < 1) return false;
  }
  return true;
}

Status CheckOutput(const std::string& where, const proto::SourceOutput& output) {
  if (output.name().empty()) return InvalidArgumentError(where + ": an output has no name");
  const std::string output_where = where + ": output '" + output.name() + "'";
  if (DTypeOf(output.dtype()) == DType::kInvalid) {
    return InvalidArgumentError(output_where + " has no dtype (float32 or int32)");
  }
  if (!AllPositive(output.sample_dims())) {
    return InvalidArgumentError(output_where + " has sample_dims " +
                                DimsText(output.sample_dims()) + "; extents must be >= 1");
  }
  return Status::Ok();
}

Status CheckTextDataset(const std::string& where, const proto::DataSource& source) {
  const proto::TextDataset& text = source.text();
  if (text.path().empty()) return InvalidArgumentError(where + ": text.path is empty");
  if (text.context() < 1) {
    return InvalidArgumentError(where + ": text.context must be >= 1, got " +
                                std::to_string(text.context()));
  }
  if (text.train_fraction() < 0 || text.train_fraction() > 1) {
    return InvalidArgumentError(where + ": text.train_fraction must be in [0, 1]");
  }
  bool shaped = source.output_size() == 2;
  for (const proto::SourceOutput& output : source.output()) {
    shaped = shaped && output.dtype() == proto::DATA_TYPE_INT32 && output.sample_dims_size() == 1 &&
             output.sample_dims(0) == text.context();
  }
  if (!shaped) {
    return InvalidArgumentError(where +
                                ": a text dataset has exactly two int32 outputs with "
                                "sample_dims [" +
                                std::to_string(text.context()) + "]");
  }
  return Status::Ok();
}

Status CheckDataset(const std::string& where, const proto::DataSource& source) {
  switch (source.dataset_case()) {
    case proto::DataSource::kNpy:
      if (source.npy().path_size() != source.output_size()) {
        return InvalidArgumentError(where + ": npy lists " +
                                    std::to_string(source.npy().path_size()) + " paths for " +
                                    std::to_string(source.output_size()) + " outputs");
      }
      return Status::Ok();
    case proto::DataSource::kSynthetic:
      for (const proto::SourceOutput& output : source.output()) {
        if (output.dtype() == proto::DATA_TYPE_INT32 && source.synthetic().int_high() < 1) {
          return InvalidArgumentError(where +
                                      ": synthetic.int_high must be >= 1 for int32 "
                                      "output '" +
                                      output.name() + "'");
        }
      }
      return Status::Ok();
    case proto::DataSource::kText:
      return CheckTextDataset(where, source);
    case proto::DataSource::DATASET_NOT_SET:
      break;
  }
  return InvalidArgumentError(where + ": no dataset; set one of npy, synthetic or text");
}

Status CheckInitializer(const std::string& where, const proto::Initializer& initializer) {
  switch (initializer.kind_case()) {
    case proto::Initializer::kConstant:
      return Status::Ok();
    case proto::Initializer::kNormal:
      if (initializer.normal().stddev() < 0) {
        return InvalidArgumentError(where + ": initializer.normal.stddev must be >= 0");
      }
      return Status::Ok();
    case proto::Initializer::kUniform:
      if (!(initializer.uniform().low() < initializer.uniform().high())) {
        return InvalidArgumentError(where + ": initializer.uniform needs low < high");
      }
      return Status::Ok();
    case proto::Initializer::kNpyPath:
      if (initializer.npy_path().empty()) {
        return InvalidArgumentError(where + ": initializer.npy_path is empty");
      }
      return Status::Ok();
    case proto::Initializer::KIND_NOT_SET:
      break;
  }
  return InvalidArgumentError(where +
                              ": initializer is not set (constant, normal, uniform or "
                              "npy_path)");
}

}  // namespace

Status CheckSource(const proto::DataSource& source) {
  if (source.name().empty()) return InvalidArgumentError("a source has no name");
  const std::string where = "source '" + source.name() + "'";
  if (source.output_size() == 0) return InvalidArgumentError(where + ": has no output");
  for (const proto::SourceOutput& output : source.output()) {
    SOFTWIRE_RETURN_IF_ERROR(CheckOutput(where, output));
  }
  return CheckDataset(where, source);
}

TensorType SourceOutputType(const proto::SourceOutput& output, int64_t micro_batch_size) {
  std::vector<int64_t> dims = {micro_batch_size};
  dims.insert(dims.end(), output.sample_dims().begin(), output.sample_dims().end());
  return TensorType{DTypeOf(output.dtype()), Shape(std::move(dims))};
}

Status CheckVariable(const proto::Variable& variable) {
  if (variable.name().empty()) return InvalidArgumentError("a variable has no name");
  const std::string where = "variable '" + variable.name() + "'";
  DType dtype = DTypeOf(variable.dtype());
  if (dtype == DType::kInvalid) {
    return InvalidArgumentError(where + ": dtype is not set (float32, or int32 when frozen)");
  }
  if (dtype != DType::kFloat32 && !variable.frozen()) {
    return InvalidArgumentError(where + ": dtype " + DTypeName(dtype) +
                                " needs `frozen: true`; only float32 variables are trained");
  }
  if (!AllPositive(variable.dims())) {
    return InvalidArgumentError(where + ": dims " + DimsText(variable.dims()) +
                                " has an extent < 1");
  }
  return CheckInitializer(where, variable.initializer());
}

TensorType VariableType(const proto::Variable& variable) {
  return TensorType{DTypeOf(variable.dtype()),
                    Shape(std::vector<int64_t>(variable.dims().begin(), variable.dims().end()))};
}

}  // namespace compiler
}  // namespace softwire
