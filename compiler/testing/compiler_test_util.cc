#include "compiler/testing/compiler_test_util.h"

#include <sstream>
#include <utility>

#include "compiler/ops/attribute_schema.h"
#include "compiler/pass_manager.h"
#include "compiler/passes/passes.h"
#include "placement/cluster_spec.h"

namespace softwire {
namespace compiler {

proto::Cluster OneCpuCluster(int64_t memory_bytes) {
  proto::Cluster cluster = placement::SingleCpuCluster(2);
  cluster.mutable_node(0)->mutable_device(0)->set_memory_bytes(memory_bytes);
  return cluster;
}

proto::Cluster WithMemoryBudget(proto::Cluster cluster, int64_t memory_bytes) {
  for (proto::NodeSpec& node : *cluster.mutable_node()) {
    for (proto::DeviceSpec& device : *node.mutable_device()) device.set_memory_bytes(memory_bytes);
  }
  return cluster;
}

int64_t LeastReachableBytes(const JobFile& job, CompileOptions options) {
  options.cluster = WithMemoryBudget(options.cluster, 1024);
  StatusOr<proto::Plan> plan = CompileJob(job, options);
  if (plan.ok() || plan.status().code() != StatusCode::kResourceExhausted) return -1;
  const std::string& message = plan.status().message();
  const std::string key = "the plan needs at least ";
  const size_t at = message.find(key);
  if (at == std::string::npos) return -1;
  return std::stoll(message.substr(at + key.size()));
}

proto::Cluster ClusterNamedIn(const std::string& job_text) {
  std::istringstream lines(job_text);
  const std::string key = "# cluster: ";
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(key, 0) != 0) continue;
    StatusOr<proto::Cluster> cluster = placement::ParseClusterShorthand(line.substr(key.size()), 8);
    CHECK(cluster.ok()) << cluster.status();
    return *cluster;
  }
  return OneCpuCluster();
}

StatusOr<proto::Plan> CompileJobText(const std::string& text, CompileOptions options) {
  SOFTWIRE_ASSIGN_OR_RETURN(JobFile job_file, ParseJobText(text, "test.pbtxt", "."));
  if (options.cluster.node_size() == 0) options.cluster = OneCpuCluster();
  return CompileJob(job_file, options);
}

StagedCompilation::StagedCompilation(const std::string& text, CompileOptions options)
    : options_(std::move(options)), registry_(MakeStandardOps()) {
  StatusOr<JobFile> parsed = ParseJobText(text, "test.pbtxt", ".");
  CHECK(parsed.ok()) << parsed.status();
  job_file_ = std::move(parsed).value();
  if (options_.cluster.node_size() == 0) options_.cluster = OneCpuCluster();
  compilation_ = std::make_unique<Compilation>(job_file_, options_, registry_);
}

Status StagedCompilation::RunThrough(const std::string& last_pass) {
  std::vector<Pass> passes = StandardPasses();
  size_t end = 0;
  while (end < passes.size() && passes[end].name != last_pass) ++end;
  CHECK_LT(end, passes.size()) << "unknown pass " << last_pass;
  std::vector<Pass> remaining(passes.begin() + passes_run_, passes.begin() + end + 1);
  passes_run_ = end + 1;
  return PassManager(std::move(remaining)).Run(*compilation_);
}

const LogicalOp& StagedCompilation::op(const std::string& name) const {
  std::optional<OpId> id = graph().FindOp(name);
  CHECK(id.has_value()) << "no op named " << name;
  return graph().op(*id);
}

const LogicalTensor& StagedCompilation::tensor(const std::string& name) const {
  std::optional<TensorId> id = graph().FindTensor(name);
  CHECK(id.has_value()) << "no tensor named " << name;
  return graph().tensor(*id);
}

std::vector<std::string> StagedCompilation::OpsOfType(const std::string& type) const {
  std::vector<std::string> names;
  for (const LogicalOp& op : graph().ops()) {
    if (op.type == type) names.push_back(op.name);
  }
  return names;
}

std::string StagedCompilation::InputNames(const std::string& name) const {
  std::string text;
  for (TensorId input : op(name).inputs) {
    text += (text.empty() ? "" : ", ") + graph().tensor(input).name;
  }
  return text;
}

StatusOr<std::vector<TensorType>> InferOp(const OpRegistry& registry, const std::string& type,
                                          std::vector<TensorType> inputs,
                                          const AttributeMap& attributes) {
  SOFTWIRE_ASSIGN_OR_RETURN(const OpDefinition* definition, registry.Lookup(type));
  SOFTWIRE_ASSIGN_OR_RETURN(AttributeMap complete, CompleteAttributes(*definition, attributes));
  InferenceContext context(*definition, std::move(inputs), complete,
                           std::vector<TensorType>(definition->output_names.size()));
  SOFTWIRE_RETURN_IF_ERROR(definition->infer(context));
  return context.outputs();
}

TensorType F32(std::vector<int64_t> dims) {
  return {DType::kFloat32, Shape(std::move(dims))};
}
TensorType I32(std::vector<int64_t> dims) {
  return {DType::kInt32, Shape(std::move(dims))};
}

const proto::ActorDef* FindActor(const proto::Plan& plan, const std::string& name) {
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.name() == name) return &actor;
  }
  return nullptr;
}

}  // namespace compiler
}  // namespace softwire
