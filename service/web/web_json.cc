#include "service/web/web_json.h"

#include "actors/actor_protocol.h"  // WaitKindName

namespace softwire {
namespace service {
namespace {

nlohmann::json ParallelJson(const proto::Parallelism& parallel) {
  return {{"data", parallel.data_parallel()},
          {"tensor", parallel.tensor_parallel()},
          {"pipeline", parallel.pipeline_stages()}};
}

nlohmann::json StringList(const google::protobuf::RepeatedPtrField<std::string>& items) {
  nlohmann::json list = nlohmann::json::array();
  for (const std::string& item : items) list.push_back(item);
  return list;
}

}  // namespace

std::string JobStateName(proto::JobState state) {
  switch (state) {
    case proto::JOB_STATE_QUEUED:
      return "queued";
    case proto::JOB_STATE_RUNNING:
      return "running";
    case proto::JOB_STATE_SUCCEEDED:
      return "succeeded";
    case proto::JOB_STATE_FAILED:
      return "failed";
    case proto::JOB_STATE_CANCELLED:
      return "cancelled";
    default:
      return "unspecified";
  }
}

bool IsTerminalState(proto::JobState state) {
  return state == proto::JOB_STATE_SUCCEEDED || state == proto::JOB_STATE_FAILED ||
         state == proto::JOB_STATE_CANCELLED;
}

nlohmann::json PlanSummaryJson(const proto::PlanSummary& plan) {
  nlohmann::json by_kind = nlohmann::json::object();
  for (const auto& [kind, count] : plan.actors_by_kind()) by_kind[kind] = count;
  nlohmann::json devices = nlohmann::json::array();
  for (const proto::PlannedDevice& device : plan.device()) {
    const proto::MemorySplit& m = device.memory();
    devices.push_back({{"device", device.device()},
                       {"planned_bytes", device.planned_bytes()},
                       {"register_bytes", device.register_bytes()},
                       {"memory",
                        {{"weights", m.weights()},
                         {"gradients", m.gradients()},
                         {"optimizer_state", m.optimizer_state()},
                         {"kept_activations", m.kept_activations()},
                         {"transient", m.transient()},
                         {"transfer", m.transfer()},
                         {"workspaces", m.workspaces()},
                         {"other_state", m.other_state()},
                         {"padding", m.padding()},
                         {"saved_by_views", m.saved_by_views()},
                         {"saved_by_reuse", m.saved_by_reuse()},
                         {"saved_by_in_place", m.saved_by_in_place()}}}});
  }
  return {{"actors", plan.actors()}, {"actors_by_kind", by_kind},
          {"devices", devices},      {"samples_per_step", plan.samples_per_step()},
          {"steps", plan.steps()},   {"parallel", ParallelJson(plan.parallel())},
          {"loss", plan.loss()},     {"metrics", StringList(plan.metric())}};
}

nlohmann::json StepMetricsJson(const proto::StepMetrics& step) {
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& [name, value] : step.metric()) metrics[name] = value;
  return {{"step", step.step()},
          {"loss", step.loss()},
          {"metrics", metrics},
          {"seconds", step.seconds()},
          {"samples_per_second", step.samples_per_second()}};
}

nlohmann::json JobInfoJson(const proto::JobInfo& job) {
  nlohmann::json json = {{"job_id", job.job_id()},
                         {"name", job.name()},
                         {"state", JobStateName(job.state())},
                         {"submitted_unix", job.submitted_unix()},
                         {"started_unix", job.started_unix()},
                         {"ended_unix", job.ended_unix()},
                         {"steps", job.steps()},
                         {"completed_steps", job.completed_steps()},
                         {"last_loss", job.last_loss()},
                         {"samples_per_second", job.samples_per_second()},
                         {"error", job.error()},
                         {"devices", StringList(job.device())},
                         {"last_event", job.last_event()}};
  if (job.has_plan()) json["plan"] = PlanSummaryJson(job.plan());
  return json;
}

nlohmann::json JobEventJson(const proto::JobEvent& event) {
  nlohmann::json json = {{"sequence", event.sequence()}, {"time_unix", event.time_unix()}};
  switch (event.kind_case()) {
    case proto::JobEvent::kQueued:
      json["kind"] = "queued";
      json["queued"] = {{"position", event.queued().position()}};
      break;
    case proto::JobEvent::kCompiled:
      json["kind"] = "compiled";
      json["compiled"] = PlanSummaryJson(event.compiled());
      break;
    case proto::JobEvent::kStarted:
      json["kind"] = "started";
      json["started"] = {{"devices", StringList(event.started().device())}};
      break;
    case proto::JobEvent::kStep:
      json["kind"] = "step";
      json["step"] = StepMetricsJson(event.step());
      break;
    case proto::JobEvent::kCheckpoint:
      json["kind"] = "checkpoint";
      json["checkpoint"] = {{"step", event.checkpoint().step()},
                            {"path", event.checkpoint().path()}};
      break;
    case proto::JobEvent::kFinished:
      json["kind"] = "finished";
      json["finished"] = {{"steps", event.finished().steps()},
                          {"seconds", event.finished().seconds()},
                          {"samples_per_second", event.finished().samples_per_second()}};
      break;
    case proto::JobEvent::kFailed:
      json["kind"] = "failed";
      json["failed"] = {{"error", event.failed().error()}, {"code", event.failed().code()}};
      break;
    case proto::JobEvent::kCancelled:
      json["kind"] = "cancelled";
      json["cancelled"] = {{"reason", event.cancelled().reason()}};
      break;
    default:
      json["kind"] = "unknown";
  }
  return json;
}

nlohmann::json DeviceInfoJson(const proto::DeviceInfo& device) {
  return {{"device", device.device()}, {"kind", device.kind()},
          {"cores", device.cores()},   {"memory_bytes", device.memory_bytes()},
          {"job_id", device.job_id()}, {"allocated_bytes", device.allocated_bytes()}};
}

nlohmann::json WaitStatesJson(const runtime::JobWaitStates& waits) {
  nlohmann::json actors = nlohmann::json::array();
  for (const runtime::ActorWaitState& wait : waits.waits) {
    nlohmann::json waiting_on = nlohmann::json::array();
    for (const std::string& name : wait.waiting_on_names) waiting_on.push_back(name);
    actors.push_back(
        {{"actor", wait.actor},
         {"name", wait.actor_name},
         {"kind", wait.kind},
         {"device", wait.device},
         {"answered", wait.answered},
         {"state", wait.answered
                       ? actors::WaitKindName(static_cast<actors::WaitState::Kind>(wait.state))
                       : "silent"},
         {"next_firing", wait.next_firing},
         {"completed_firings", wait.completed_firings},
         {"register", wait.register_name},
         {"sequence", wait.sequence},
         {"waiting_on", waiting_on},
         {"line", wait.line}});
  }
  return {{"job_name", waits.job_name},
          {"elapsed_seconds", waits.elapsed_seconds},
          {"completed_firings", waits.completed_firings},
          {"actors", waits.actors},
          {"unfinished", waits.unfinished},
          {"waits", actors}};
}

}  // namespace service
}  // namespace softwire
