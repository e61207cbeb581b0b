#include "service/rpc/node_connection.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "proto/node_service.grpc.pb.h"
#include "runtime/rpc/rpc_status.h"

namespace softwire {
namespace service {
namespace {

using Clock = std::chrono::steady_clock;

// A plan can be large: a HostShare carries a whole one.
constexpr int kMaxReceiveBytes = 1 << 30;
constexpr std::chrono::seconds kJoinDeadline{5};
constexpr std::chrono::milliseconds kWriterPoll{20};

int64_t NowNanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

std::chrono::milliseconds Milliseconds(double seconds, std::chrono::milliseconds otherwise) {
  if (seconds <= 0) return otherwise;
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// The server refused the node for good: retrying cannot help.
bool IsFinalRefusal(grpc::StatusCode code) {
  return code == grpc::StatusCode::FAILED_PRECONDITION ||
         code == grpc::StatusCode::INVALID_ARGUMENT || code == grpc::StatusCode::UNAUTHENTICATED ||
         code == grpc::StatusCode::PERMISSION_DENIED || code == grpc::StatusCode::UNIMPLEMENTED;
}

}  // namespace

class NodeConnection::Calls {
 public:
  explicit Calls(const std::shared_ptr<grpc::Channel>& channel)
      : nodes(proto::NodeService::NewStub(channel)) {}
  const std::unique_ptr<proto::NodeService::Stub> nodes;
};

NodeConnection::NodeConnection(NodeConnectionOptions options, NodeAgent* agent)
    : options_(std::move(options)),
      agent_(agent),
      calls_(std::make_unique<Calls>(rpc::CreateClientChannel(
          options_.server_address, options_.security, kMaxReceiveBytes))) {}

NodeConnection::~NodeConnection() = default;

void NodeConnection::Log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

Status NodeConnection::Run() {
  std::chrono::milliseconds retry = options_.first_retry;
  std::string last_failure;
  for (;;) {
    {
      MutexLock lock(&mutex_);
      if (stopping_) return Status::Ok();
    }
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kJoinDeadline);
    rpc::AttachToken(options_.security, &context);
    proto::JoinNodeResponse joined;
    const grpc::Status status = calls_->nodes->JoinNode(&context, options_.join, &joined);
    if (status.ok()) {
      retry = options_.first_retry;
      last_failure.clear();
      Log("joined " + options_.server_address + " as node '" + options_.join.node().name() +
          "' (session " + joined.session_id() + ")");
      const std::string reason = Serve(joined);
      agent_->AbortAll("the node lost the server: " + reason);
      MutexLock lock(&mutex_);
      if (stopping_) return Status::Ok();
      Log("lost the server at " + options_.server_address + " (" + reason +
          "); every job was aborted and freed; joining again");
      continue;
    }
    if (IsFinalRefusal(status.error_code())) {
      return rpc::FromGrpcStatus(status, "joining " + options_.server_address);
    }
    if (status.error_message() != last_failure) {
      last_failure = status.error_message();
      Log("cannot join " + options_.server_address + " yet: " + status.error_message() +
          "; retrying");
    }
    MutexLock lock(&mutex_);
    const Clock::time_point until = Clock::now() + retry;
    while (!stopping_ && changed_.WaitUntil(&lock, until)) {
    }
    retry = std::min(retry * 2, options_.longest_retry);
  }
}

std::string NodeConnection::Serve(const proto::JoinNodeResponse& joined) {
  const std::chrono::milliseconds period =
      Milliseconds(joined.heartbeat_period_seconds(), std::chrono::milliseconds(500));
  const std::chrono::milliseconds timeout =
      Milliseconds(joined.heartbeat_timeout_seconds(), std::chrono::milliseconds(2500));
  grpc::ClientContext context;
  rpc::AttachToken(options_.security, &context);
  {
    MutexLock lock(&mutex_);
    if (stopping_) return "the node agent stopped";
    context_ = &context;
    session_open_ = true;
    outbox_.clear();
  }
  std::unique_ptr<grpc::ClientReaderWriter<proto::NodeReport, proto::NodeCommand>> stream =
      calls_->nodes->Connect(&context);
  std::atomic<int64_t> last_heard{NowNanoseconds()};
  std::atomic<bool> server_silent{false};

  // The writer: OpenStream, then queued reports and a heartbeat every period; it cancels the
  // call when the server was silent for the timeout or the agent stops.
  std::thread writer([&] {
    proto::NodeReport open;
    open.mutable_open()->set_session_id(joined.session_id());
    if (!stream->Write(open)) return;
    int64_t sequence = 0;
    Clock::time_point next_heartbeat = Clock::now();
    for (;;) {
      std::deque<proto::NodeReport> reports;
      {
        MutexLock lock(&mutex_);
        const Clock::time_point until = std::min(next_heartbeat, Clock::now() + kWriterPoll);
        while (outbox_.empty() && !stopping_ && session_open_ && changed_.WaitUntil(&lock, until)) {
        }
        if (stopping_ || !session_open_) break;
        reports.swap(outbox_);
      }
      bool written = true;
      for (const proto::NodeReport& report : reports) {
        if (!(written = stream->Write(report))) break;
      }
      if (!written) break;
      const Clock::time_point now = Clock::now();
      if (now >= next_heartbeat) {
        proto::NodeReport heartbeat;
        *heartbeat.mutable_heartbeat() = agent_->Heartbeat();
        heartbeat.mutable_heartbeat()->set_sequence(++sequence);
        if (!stream->Write(heartbeat)) break;
        next_heartbeat = now + period;
      }
      const int64_t silence = NowNanoseconds() - last_heard.load();
      if (silence > std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count()) {
        server_silent = true;
        break;
      }
    }
    context.TryCancel();
  });

  proto::NodeCommand command;
  while (stream->Read(&command)) {
    last_heard = NowNanoseconds();
    if (command.has_probe()) {
      proto::NodeReport reply;
      proto::ClockProbeReply* answer = reply.mutable_probe_reply();
      answer->set_probe_id(command.probe().probe_id());
      answer->set_server_send_ns(command.probe().server_send_ns());
      answer->set_node_time_ns(NowNanoseconds());
      Send(std::move(reply));
    } else if (!command.has_keepalive()) {
      agent_->Handle(command);
    }
  }
  context.TryCancel();
  bool stopped = false;
  {
    MutexLock lock(&mutex_);
    session_open_ = false;
    context_ = nullptr;
    stopped = stopping_;
    outbox_.clear();
    changed_.NotifyAll();
  }
  writer.join();
  const grpc::Status finished = stream->Finish();
  if (stopped) return "the node agent stopped";
  if (server_silent) {
    return "the server sent nothing for " + std::to_string(timeout.count()) + " ms";
  }
  return finished.ok() ? "the server ended the session"
                       : "the stream ended: " + finished.error_message();
}

void NodeConnection::Stop() {
  MutexLock lock(&mutex_);
  stopping_ = true;
  if (context_ != nullptr) context_->TryCancel();
  changed_.NotifyAll();
}

void NodeConnection::Send(proto::NodeReport report) {
  MutexLock lock(&mutex_);
  if (!session_open_) return;
  outbox_.push_back(std::move(report));
  changed_.NotifyAll();
}

}  // namespace service
}  // namespace softwire
