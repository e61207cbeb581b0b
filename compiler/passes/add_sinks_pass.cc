// add_sinks: one sink op per reported value (the loss first, then the metrics in job order).
#include <set>

#include "compiler/ops/graph_builder.h"
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

// The tensor named `name`, which must be a scalar float32; `field` says where it was named.
StatusOr<TensorId> FindScalar(const Compilation& compilation, int line, const std::string& field,
                              const std::string& name) {
  if (name.empty()) return compilation.ErrorAt(line, field + " is empty");
  std::optional<TensorId> tensor = compilation.graph.FindTensor(name);
  if (!tensor.has_value()) {
    return compilation.ErrorAt(line, field + " '" + name + "' is not a tensor of the job");
  }
  const TensorType& type = compilation.graph.tensor(*tensor).type;
  if (type != TensorType{DType::kFloat32, Shape()}) {
    return compilation.ErrorAt(
        line, field + " '" + name + "' must be a scalar float32 tensor, got " + type.ToString());
  }
  return *tensor;
}

Status AddSink(Compilation& compilation, TensorId tensor, bool is_loss) {
  GraphBuilder builder(compilation.graph, compilation.registry());
  const std::string name = compilation.graph.tensor(tensor).name;
  OpRequest request;
  request.name = name + ".sink";
  request.type = "sink";
  request.inputs = {tensor};
  SOFTWIRE_ASSIGN_OR_RETURN(OpId sink, builder.Add(request));
  compilation.outputs.push_back({name, is_loss, sink});
  return Status::Ok();
}

}  // namespace

Status AddSinksPass(Compilation& compilation) {
  const proto::Job& job = compilation.job();
  std::set<std::string> reported;
  if (compilation.schedule.training) {
    SOFTWIRE_ASSIGN_OR_RETURN(
        TensorId loss, FindScalar(compilation, compilation.job_file().train_line, "train.loss",
                                  job.train().loss()));
    const LogicalOp& producer = compilation.graph.op(compilation.graph.tensor(loss).producer);
    if (producer.type == "variable") {
      return compilation.ErrorAt(
          compilation.job_file().train_line,
          "train.loss '" + job.train().loss() + "' is a variable; the loss must be an op's output");
    }
    SOFTWIRE_RETURN_IF_ERROR(AddSink(compilation, loss, true));
    reported.insert(job.train().loss());
  }
  const std::vector<int>& lines = compilation.job_file().metric_line_at;
  for (int i = 0; i < job.metric_size(); ++i) {
    const std::string& metric = job.metric(i);
    const int line = i < static_cast<int>(lines.size()) ? lines[i] : 0;
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId tensor, FindScalar(compilation, line, "metric", metric));
    if (!reported.insert(metric).second) {
      return compilation.ErrorAt(line, "metric '" + metric + "' is reported already");
    }
    SOFTWIRE_RETURN_IF_ERROR(AddSink(compilation, tensor, false));
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
