// build_graph: the job's sources, variables and ops as a LogicalGraph, validated.
//
// Ops may appear in any order in a job, so every output tensor is declared first and inputs
// are resolved afterwards; a name nobody declares is a dangling input.
#include <map>
#include <string>
#include <vector>

#include "compiler/ops/attribute_schema.h"
#include "compiler/passes/job_declarations.h"
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

int LineAt(const std::vector<int>& lines, int index) {
  return index < static_cast<int>(lines.size()) ? lines[index] : 0;
}

// Builds the graph of one job, remembering who declared each name so duplicates can say so.
class JobGraphBuilder {
 public:
  explicit JobGraphBuilder(Compilation& compilation)
      : compilation_(compilation), job_(compilation.job()), graph_(compilation.graph) {}

  Status Build() {
    SOFTWIRE_RETURN_IF_ERROR(AddSources());
    SOFTWIRE_RETURN_IF_ERROR(AddVariables());
    SOFTWIRE_RETURN_IF_ERROR(DeclareOpOutputs());
    for (int i = 0; i < job_.op_size(); ++i) SOFTWIRE_RETURN_IF_ERROR(AddJobOp(i));
    return CheckAcyclic();
  }

 private:
  // Claims an op name for `owner` ("variable 'w1'"); fails when another block has it.
  Status ClaimOpName(int line, const std::string& name, const std::string& owner) {
    auto [entry, inserted] = op_owners_.emplace(name, owner);
    if (inserted) return Status::Ok();
    return compilation_.ErrorAt(
        line, owner + ": the name '" + name + "' is already used by " + entry->second);
  }

  StatusOr<TensorId> DeclareTensor(int line, const std::string& subject, const std::string& name,
                                   TensorType type) {
    auto found = tensor_owners_.find(name);
    if (found != tensor_owners_.end()) {
      return compilation_.ErrorAt(
          line, subject + ": output tensor '" + name + "' is already produced by " + found->second);
    }
    tensor_owners_[name] = subject;
    return graph_.AddTensor(name, std::move(type));
  }

  Status AddSources() {
    for (int i = 0; i < job_.source_size(); ++i) {
      const proto::DataSource& source = job_.source(i);
      const int line = LineAt(compilation_.job_file().source_line_at, i);
      if (i > 0) return compilation_.ErrorAt(line, "a job has at most one source today");
      Status checked = CheckSource(source);
      if (!checked.ok()) return compilation_.ErrorAt(line, checked.message());
      const std::string subject = "source '" + source.name() + "'";
      SOFTWIRE_RETURN_IF_ERROR(ClaimOpName(line, source.name(), subject));
      NewOp op{source.name(), "source", {}, {}, {}, line, "", std::nullopt, ""};
      for (const proto::SourceOutput& output : source.output()) {
        SOFTWIRE_ASSIGN_OR_RETURN(
            TensorId tensor,
            DeclareTensor(line, subject, output.name(),
                          SourceOutputType(output, compilation_.schedule.micro_batch_size)));
        op.outputs.push_back(tensor);
      }
      SOFTWIRE_RETURN_IF_ERROR(graph_.AddOp(std::move(op)).status());
    }
    return Status::Ok();
  }

  Status AddVariables() {
    for (int i = 0; i < job_.variable_size(); ++i) {
      const proto::Variable& variable = job_.variable(i);
      const int line = LineAt(compilation_.job_file().variable_line_at, i);
      Status checked = CheckVariable(variable);
      if (!checked.ok()) return compilation_.ErrorAt(line, checked.message());
      const std::string subject = "variable '" + variable.name() + "'";
      SOFTWIRE_RETURN_IF_ERROR(ClaimOpName(line, variable.name(), subject));
      SOFTWIRE_ASSIGN_OR_RETURN(
          TensorId tensor, DeclareTensor(line, subject, variable.name(), VariableType(variable)));
      NewOp op{variable.name(), "variable", {}, {tensor}, {}, line, "", std::nullopt, ""};
      SOFTWIRE_RETURN_IF_ERROR(graph_.AddOp(std::move(op)).status());
    }
    return Status::Ok();
  }

  Status DeclareOpOutputs() {
    for (int i = 0; i < job_.op_size(); ++i) {
      const proto::Op& op = job_.op(i);
      const int line = LineAt(compilation_.job_file().op_line_at, i);
      if (op.name().empty()) {
        return compilation_.ErrorAt(line, "op #" + std::to_string(i) + " has no name");
      }
      const std::string subject = "op '" + op.name() + "'";
      SOFTWIRE_RETURN_IF_ERROR(ClaimOpName(line, op.name(), subject));
      for (int k = 0; k < op.output_size(); ++k) {
        if (op.output(k).empty()) {
          return compilation_.ErrorAt(
              line, subject + ": output " + std::to_string(k) + " has an empty name");
        }
        SOFTWIRE_RETURN_IF_ERROR(DeclareTensor(line, subject, op.output(k), {}).status());
      }
    }
    return Status::Ok();
  }

  // Input and output counts against the definition.
  static Status CheckArity(const OpDefinition& definition, const proto::Op& op) {
    auto count = [](size_t n, const std::string& noun) {
      return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
    };
    auto names = [](const std::vector<std::string>& list) {
      std::string text;
      for (const std::string& name : list) text += (text.empty() ? "" : ", ") + name;
      return text;
    };
    const std::string type = "type '" + definition.type + "'";
    if (definition.variadic_inputs && op.input_size() < definition.min_inputs) {
      return InvalidArgumentError(type + " takes at least " +
                                  std::to_string(definition.min_inputs) + " inputs, got " +
                                  std::to_string(op.input_size()));
    }
    const int most = static_cast<int>(definition.input_names.size());
    const int fewest = most - definition.optional_inputs;
    if (!definition.variadic_inputs && (op.input_size() < fewest || op.input_size() > most)) {
      const std::string takes = fewest == most
                                    ? count(most, "input")
                                    : std::to_string(fewest) + " to " + count(most, "input");
      return InvalidArgumentError(type + " takes " + takes + " (" + names(definition.input_names) +
                                  "), got " + std::to_string(op.input_size()));
    }
    if (definition.variadic_outputs) {
      if (op.output_size() >= 1) return Status::Ok();
      return InvalidArgumentError(type + " needs at least one output");
    }
    if (op.output_size() != static_cast<int>(definition.output_names.size())) {
      return InvalidArgumentError(type + " has " + count(definition.output_names.size(), "output") +
                                  " (" + names(definition.output_names) + "), got " +
                                  std::to_string(op.output_size()));
    }
    return Status::Ok();
  }

  StatusOr<NewOp> ResolveJobOp(const proto::Op& op, int line) {
    SOFTWIRE_ASSIGN_OR_RETURN(const OpDefinition* definition,
                              compilation_.registry().Lookup(op.type()));
    if (definition->usage == OpUsage::kActorKind) {
      return InvalidArgumentError("type '" + op.type() +
                                  "' is made by the compiler and cannot appear in a job");
    }
    SOFTWIRE_RETURN_IF_ERROR(CheckArity(*definition, op));
    NewOp new_op;
    new_op.name = op.name();
    new_op.type = op.type();
    new_op.line = line;
    for (const std::string& input : op.input()) {
      std::optional<TensorId> tensor = graph_.FindTensor(input);
      if (!tensor.has_value()) {
        return InvalidArgumentError("input '" + input +
                                    "' is not produced by any op, source or variable");
      }
      new_op.inputs.push_back(*tensor);
    }
    for (const std::string& output : op.output())
      new_op.outputs.push_back(*graph_.FindTensor(output));
    // `sbp` is a placement hint (docs/PARALLELISM.md), not an attribute of the op's kernel.
    std::vector<proto::Attribute> attributes;
    for (const proto::Attribute& attribute : op.attr()) {
      if (attribute.name() != "sbp") {
        attributes.push_back(attribute);
      } else if (attribute.value_case() != proto::Attribute::kString) {
        return InvalidArgumentError("attribute 'sbp' must be a string such as \"S(0), B\"");
      } else {
        new_op.sbp_hint = attribute.string();
      }
    }
    SOFTWIRE_ASSIGN_OR_RETURN(new_op.attributes, ResolveAttributes(*definition, attributes));
    if (op.has_stage()) {
      if (op.stage() < 0) return InvalidArgumentError("stage must be >= 0");
      new_op.stage = op.stage();
    }
    return new_op;
  }

  Status AddJobOp(int index) {
    const proto::Op& op = job_.op(index);
    const int line = LineAt(compilation_.job_file().op_line_at, index);
    StatusOr<NewOp> new_op = ResolveJobOp(op, line);
    if (!new_op.ok()) {
      return compilation_.ErrorAt(line, "op '" + op.name() + "': " + new_op.status().message());
    }
    return graph_.AddOp(std::move(new_op).value()).status();
  }

  Status CheckAcyclic() {
    OpId first_on_cycle = -1;
    StatusOr<std::vector<OpId>> order = graph_.TopologicalOrder(&first_on_cycle);
    if (order.ok()) return Status::Ok();
    return compilation_.ErrorAt(graph_.op(first_on_cycle).line, order.status().message());
  }

  Compilation& compilation_;
  const proto::Job& job_;
  LogicalGraph& graph_;
  std::map<std::string, std::string> op_owners_;
  std::map<std::string, std::string> tensor_owners_;
};

}  // namespace

Status BuildGraphPass(Compilation& compilation) {
  SOFTWIRE_RETURN_IF_ERROR(JobGraphBuilder(compilation).Build());
  compilation.job_ops_end = compilation.graph.op_count();
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
