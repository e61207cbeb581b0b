#include "service/job_compilation.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "plan/labels.h"
#include "plan/memory_breakdown.h"

namespace softwire {
namespace service {
namespace {

// The degree the settings give, else the job's, else 1.
int Degree(int32_t settings, int32_t job) {
  if (settings > 0) return settings;
  return job > 0 ? job : 1;
}

proto::Parallelism EffectiveParallelism(const proto::RunSettings& settings, const proto::Job& job) {
  proto::Parallelism parallel;
  parallel.set_data_parallel(
      Degree(settings.parallel().data_parallel(), job.parallel().data_parallel()));
  parallel.set_tensor_parallel(
      Degree(settings.parallel().tensor_parallel(), job.parallel().tensor_parallel()));
  parallel.set_pipeline_stages(
      Degree(settings.parallel().pipeline_stages(), job.parallel().pipeline_stages()));
  return parallel;
}

// dp * tp * pp, saturating: each degree is a positive int32, so the first product fits in int64
// and the second may not.
int64_t DevicesOfDegrees(const proto::Parallelism& parallel) {
  const int64_t product = int64_t{parallel.data_parallel()} * parallel.tensor_parallel();
  if (product > std::numeric_limits<int64_t>::max() / parallel.pipeline_stages()) {
    return std::numeric_limits<int64_t>::max();
  }
  return product * parallel.pipeline_stages();
}

StatusOr<compiler::JobFile> ParseSubmission(const proto::JobSubmission& submission,
                                            const std::string& job_directory) {
  const std::string file_name =
      submission.file_name().empty() ? "job.pbtxt" : submission.file_name();
  switch (submission.graph_case()) {
    case proto::JobSubmission::kJobText:
      return compiler::ParseJobText(submission.job_text(), file_name, job_directory);
    case proto::JobSubmission::kJob: {
      compiler::JobFile file;
      file.job = submission.job();
      file.path = file_name;
      file.directory = job_directory;
      return file;
    }
    default:
      return InvalidArgumentError("the submission has no job graph (job_text or job)");
  }
}

// "ACTOR_KIND_COMPUTE" -> "compute".
std::string KindName(proto::ActorKind kind) {
  std::string name = proto::ActorKind_Name(kind);
  const std::string prefix = "ACTOR_KIND_";
  if (name.compare(0, prefix.size(), prefix) == 0) name = name.substr(prefix.size());
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace

int ClusterDeviceCount(const proto::Cluster& cluster) {
  int count = 0;
  for (const proto::NodeSpec& node : cluster.node()) count += node.device_size();
  return count;
}

proto::Cluster FirstDevices(const proto::Cluster& cluster, int devices) {
  proto::Cluster first = cluster;
  first.clear_node();
  int left = devices;
  for (const proto::NodeSpec& node : cluster.node()) {
    if (left <= 0) break;
    proto::NodeSpec* kept = first.add_node();
    *kept = node;
    kept->clear_device();
    for (const proto::DeviceSpec& device : node.device()) {
      if (left <= 0) break;
      *kept->add_device() = device;
      --left;
    }
    if (kept->device_size() == 0) first.mutable_node()->RemoveLast();
  }
  return first;
}

proto::PlanSummary SummarizePlan(const proto::Plan& plan, const proto::Parallelism& parallel) {
  proto::PlanSummary summary;
  summary.set_actors(plan.actor_size());
  for (const proto::ActorDef& actor : plan.actor()) {
    ++(*summary.mutable_actors_by_kind())[KindName(actor.kind())];
  }
  for (const proto::PlanDevice& device : plan.device()) {
    proto::PlannedDevice* planned = summary.add_device();
    planned->set_device(plan::DeviceName(device));
    planned->set_planned_bytes(device.planned_bytes());
    planned->set_register_bytes(device.register_bytes());
    const plan::MemoryBreakdown split = plan::BreakDownMemory(plan, device.id());
    proto::MemorySplit* memory = planned->mutable_memory();
    memory->set_weights(split.weights);
    memory->set_gradients(split.gradients);
    memory->set_optimizer_state(split.optimizer_state);
    memory->set_kept_activations(split.kept_activations);
    memory->set_transient(split.transient);
    memory->set_transfer(split.transfer);
    memory->set_workspaces(split.workspaces);
    memory->set_other_state(split.other_state);
    memory->set_padding(split.padding);
    memory->set_saved_by_views(split.saved_by_views);
    memory->set_saved_by_reuse(split.saved_by_reuse);
    memory->set_saved_by_in_place(split.saved_by_in_place);
  }
  summary.set_samples_per_step(std::max<int64_t>(1, plan.schedule().pieces_per_step()) *
                               plan.schedule().micro_batch_size());
  summary.set_steps(plan.schedule().steps());
  *summary.mutable_parallel() = parallel;
  for (const proto::PlanOutput& output : plan.output()) {
    if (output.is_loss()) {
      summary.set_loss(output.name());
    } else {
      summary.add_metric(output.name());
    }
  }
  return summary;
}

StatusOr<CompiledJob> CompileSubmission(const proto::JobSubmission& submission,
                                        const proto::Cluster& server,
                                        const std::string& job_directory) {
  CompiledJob compiled;
  SOFTWIRE_ASSIGN_OR_RETURN(compiled.file, ParseSubmission(submission, job_directory));
  const proto::RunSettings& settings = submission.settings();
  compiled.parallel = EffectiveParallelism(settings, compiled.file.job);
  compiled.name =
      compiled.file.job.name().empty() ? submission.file_name() : compiled.file.job.name();
  if (settings.steps() < 0 || settings.micro_batches() < 0 || settings.devices() < 0) {
    return InvalidArgumentError("settings: steps, micro_batches and devices must be >= 0");
  }
  if (settings.checkpoint_every() < 0 || settings.keep_checkpoints() < 0 ||
      settings.keep_checkpoints() > 1000) {
    return InvalidArgumentError(
        "settings: checkpoint_every must be >= 0 and keep_checkpoints within 0..1000");
  }
  const int64_t degrees = DevicesOfDegrees(compiled.parallel);
  const int64_t wanted = settings.devices() > 0 ? settings.devices() : degrees;
  const int server_devices = ClusterDeviceCount(server);

  compiler::CompileOptions options;
  options.steps = settings.steps();
  options.micro_batches_per_step = settings.micro_batches();
  options.share_memory = !settings.no_memory_reuse();
  options.fold_views = !settings.no_views();
  options.in_place = !settings.no_in_place();
  options.precision = settings.precision();
  if (settings.parallel().data_parallel() > 0) {
    options.parallel.set_data_parallel(settings.parallel().data_parallel());
  }
  if (settings.parallel().tensor_parallel() > 0) {
    options.parallel.set_tensor_parallel(settings.parallel().tensor_parallel());
  }
  if (settings.parallel().pipeline_stages() > 0) {
    options.parallel.set_pipeline_stages(settings.parallel().pipeline_stages());
  }
  if (wanted > server_devices) {
    // The compiler's own words where it refuses the job on every device of the server too.
    options.cluster = server;
    StatusOr<proto::Plan> on_all = compiler::CompileJob(compiled.file, options);
    if (!on_all.ok() && on_all.status().code() != StatusCode::kInvalidArgument) {
      return FailedPreconditionError(on_all.status().message());
    }
    if (!on_all.ok() && degrees > server_devices) {
      return FailedPreconditionError(on_all.status().message());
    }
    if (!on_all.ok()) return on_all.status();
    return FailedPreconditionError("the job asks for " + std::to_string(wanted) +
                                   " devices but the server has " + std::to_string(server_devices));
  }
  compiled.devices = static_cast<int>(wanted);
  options.cluster = FirstDevices(server, compiled.devices);
  StatusOr<proto::Plan> plan = compiler::CompileJob(compiled.file, options);
  if (!plan.ok()) {
    if (plan.status().code() == StatusCode::kResourceExhausted) {
      return FailedPreconditionError(plan.status().message());
    }
    return plan.status();
  }
  compiled.plan = std::move(*plan);
  compiled.devices = std::max(1, compiled.plan.device_size());
  compiled.summary = SummarizePlan(compiled.plan, compiled.parallel);
  return compiled;
}

}  // namespace service
}  // namespace softwire
