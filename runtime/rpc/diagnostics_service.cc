#include "runtime/rpc/diagnostics_service.h"

#include <algorithm>

#include "actors/actor_protocol.h"
#include "runtime/device/trace_clock.h"
#include "runtime/rpc/rpc_security.h"
#include "runtime/rpc/rpc_status.h"

namespace softwire {
namespace rpc {
namespace {

constexpr int kDefaultTimeoutMs = 1000;
constexpr int kMaxTimeoutMs = 60000;
constexpr int kDefaultReportLines = 40;

proto::ActorWaitKind WaitKindOf(const runtime::ActorWaitState& state) {
  using Kind = actors::WaitState::Kind;
  if (!state.answered) return proto::ACTOR_WAIT_KIND_NO_ANSWER;
  switch (static_cast<Kind>(state.state)) {
    case Kind::kRunning:
      return proto::ACTOR_WAIT_KIND_RUNNING;
    case Kind::kStarved:
      return proto::ACTOR_WAIT_KIND_STARVED;
    case Kind::kBlocked:
      return proto::ACTOR_WAIT_KIND_BLOCKED;
    case Kind::kDraining:
      return proto::ACTOR_WAIT_KIND_DRAINING;
    case Kind::kFinished:
      return proto::ACTOR_WAIT_KIND_FINISHED;
  }
  return proto::ACTOR_WAIT_KIND_UNSPECIFIED;
}

void FillResponse(const runtime::JobWaitStates& states, int report_lines,
                  proto::GetWaitStatesResponse* response) {
  response->set_job(states.job_name);
  response->set_elapsed_seconds(states.elapsed_seconds);
  response->set_completed_firings(states.completed_firings);
  response->set_actors(states.actors);
  response->set_unfinished_actors(states.unfinished);
  for (const runtime::ActorWaitState& wait : states.waits) {
    proto::ActorWaitState* actor = response->add_actor();
    actor->set_actor_id(wait.actor);
    actor->set_actor(wait.actor_name);
    actor->set_kind(wait.kind);
    actor->set_node(wait.node);
    actor->set_device(wait.device);
    actor->set_state(WaitKindOf(wait));
    actor->set_next_firing(wait.next_firing);
    actor->set_completed_firings(wait.completed_firings);
    actor->set_register_id(wait.register_id);
    actor->set_register_name(wait.register_name);
    actor->set_sequence(wait.sequence);
    for (int64_t id : wait.waiting_on) actor->add_waiting_on_id(id);
    for (const std::string& name : wait.waiting_on_names) actor->add_waiting_on(name);
    actor->set_description(wait.line);
  }
  response->set_report(states.Text(report_lines));
}

}  // namespace

DiagnosticsService::DiagnosticsService(std::string node, JobWaitStatesSource source,
                                       std::string token)
    : node_(std::move(node)), source_(std::move(source)), token_(std::move(token)) {}

grpc::Status DiagnosticsService::GetWaitStates(grpc::ServerContext* context,
                                               const proto::GetWaitStatesRequest* request,
                                               proto::GetWaitStatesResponse* response) {
  grpc::Status allowed = CheckBearerToken(*context, token_);
  if (!allowed.ok()) return allowed;
  if (request->timeout_ms() < 0 || request->max_report_lines() < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "timeout_ms and max_report_lines must be >= 0");
  }
  const int timeout_ms = request->timeout_ms() == 0
                             ? kDefaultTimeoutMs
                             : std::min(request->timeout_ms(), kMaxTimeoutMs);
  const int lines =
      request->max_report_lines() == 0 ? kDefaultReportLines : request->max_report_lines();
  StatusOr<runtime::JobWaitStates> states =
      source_(request->job_id(), std::chrono::milliseconds(timeout_ms));
  if (!states.ok()) return ToGrpcStatus(states.status());
  FillResponse(*states, lines, response);
  return grpc::Status::OK;
}

grpc::Status DiagnosticsService::GetClock(grpc::ServerContext* context,
                                          const proto::GetClockRequest* request,
                                          proto::GetClockResponse* response) {
  grpc::Status allowed = CheckBearerToken(*context, token_);
  if (!allowed.ok()) return allowed;
  response->set_monotonic_ns(runtime::TraceClock::MonotonicNs());
  response->set_node(node_);
  return grpc::Status::OK;
}

}  // namespace rpc
}  // namespace softwire
