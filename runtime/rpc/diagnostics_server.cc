#include "runtime/rpc/diagnostics_server.h"

#include <grpcpp/grpcpp.h>

#include "actors/actor_protocol.h"
#include "proto/diagnostics.grpc.pb.h"
#include "runtime/device/trace_clock.h"
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

}  // namespace

class DiagnosticsService final : public proto::Diagnostics::Service {
 public:
  DiagnosticsService(std::string node, WaitStatesSource source)
      : node_(std::move(node)), source_(std::move(source)) {}

  grpc::Status GetWaitStates(grpc::ServerContext* context,
                             const proto::GetWaitStatesRequest* request,
                             proto::GetWaitStatesResponse* response) override {
    if (request->timeout_ms() < 0 || request->max_report_lines() < 0) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "timeout_ms and max_report_lines must be >= 0");
    }
    const int timeout_ms = request->timeout_ms() == 0
                               ? kDefaultTimeoutMs
                               : std::min(request->timeout_ms(), kMaxTimeoutMs);
    const int lines =
        request->max_report_lines() == 0 ? kDefaultReportLines : request->max_report_lines();
    StatusOr<runtime::JobWaitStates> states = source_(std::chrono::milliseconds(timeout_ms));
    if (!states.ok()) return ToGrpcStatus(states.status());
    response->set_job(states->job_name);
    response->set_elapsed_seconds(states->elapsed_seconds);
    response->set_completed_firings(states->completed_firings);
    response->set_actors(states->actors);
    response->set_unfinished_actors(states->unfinished);
    for (const runtime::ActorWaitState& wait : states->waits) {
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
    response->set_report(states->Text(lines));
    return grpc::Status::OK;
  }

  grpc::Status GetClock(grpc::ServerContext* context, const proto::GetClockRequest* request,
                        proto::GetClockResponse* response) override {
    response->set_monotonic_ns(runtime::TraceClock::MonotonicNs());
    response->set_node(node_);
    return grpc::Status::OK;
  }

 private:
  const std::string node_;
  const WaitStatesSource source_;
};

StatusOr<std::unique_ptr<DiagnosticsServer>> DiagnosticsServer::Start(const std::string& address,
                                                                      const std::string& node,
                                                                      WaitStatesSource source) {
  if (!IsLoopbackAddress(address)) {
    return InvalidArgumentError("cannot listen on '" + address +
                                "': diagnostics listen on loopback only (127.0.0.1:PORT, "
                                "[::1]:PORT or localhost:PORT) until TLS exists");
  }
  std::unique_ptr<DiagnosticsServer> server(new DiagnosticsServer());
  server->service_ = std::make_unique<DiagnosticsService>(node, std::move(source));
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &server->port_);
  builder.RegisterService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return UnavailableError("cannot listen on '" + address + "' (is the port taken?)");
  }
  server->address_ = address.substr(0, address.rfind(':') + 1) + std::to_string(server->port_);
  return server;
}

DiagnosticsServer::~DiagnosticsServer() {
  if (server_ == nullptr) return;
  // Calls in flight get a second to finish; the job's own answers take at most their timeout.
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server_->Wait();
}

}  // namespace rpc
}  // namespace softwire
