// JobClient: calls a `softwire serve` (job_server.h) over gRPC, each RPC of JobService as one
// method returning StatusOr, errors naming the call and the address ("SubmitJob to
// 127.0.0.1:7070: ..."), codes as the server sent them (runtime/rpc/rpc_status.h).
//
//   JobClientOptions options;
//   options.address = "127.0.0.1:7070";
//   JobClient client(options);
//   StatusOr<proto::SubmitJobResponse> submitted = client.Submit(submission);
//   Status watched = client.Watch(submitted->job().job_id(), 1, [](const proto::JobEvent& e) {
//     std::printf("event %lld\n", static_cast<long long>(e.sequence()));
//     return true;  // Keep watching.
//   });
//
// Every unary call has a deadline (options.deadline); streams have none, and end when the server
// ends them, the connection breaks (Unavailable: watch again from the next event), or
// StopWatching is called (Cancelled).
//
// Threading: thread-safe; one client may make any number of calls at once. StopWatching may be
// called from any thread (a signal-handling one, say).
#ifndef SOFTWIRE_SERVICE_RPC_JOB_CLIENT_H_
#define SOFTWIRE_SERVICE_RPC_JOB_CLIENT_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/diagnostics.pb.h"
#include "proto/job_service.pb.h"
#include "proto/node_service.pb.h"
#include "runtime/rpc/rpc_security.h"

namespace grpc {
class Channel;
class ClientContext;
}  // namespace grpc

namespace softwire {
namespace service {

struct JobClientOptions {
  // "HOST:PORT" of the server.
  std::string address = "127.0.0.1:7070";
  // TLS and the token (runtime/rpc/rpc_security.h).
  rpc::ClientSecurity security;
  // Deadline of each unary call. Submit compiles on the server: give it time.
  std::chrono::milliseconds deadline = std::chrono::seconds(120);
};

class JobClient {
 public:
  explicit JobClient(JobClientOptions options);
  ~JobClient();
  JobClient(const JobClient&) = delete;
  JobClient& operator=(const JobClient&) = delete;

  const std::string& address() const { return options_.address; }

  StatusOr<proto::SubmitJobResponse> Submit(const proto::JobSubmission& submission);
  StatusOr<proto::JobInfo> GetJob(const std::string& job_id);
  StatusOr<std::vector<proto::JobInfo>> ListJobs(const std::vector<proto::JobState>& states = {},
                                                 int limit = 0);
  // `reason` empty: the server says "cancelled by a client".
  StatusOr<proto::JobInfo> Cancel(const std::string& job_id, const std::string& reason = "");
  StatusOr<proto::ListDevicesResponse> ListDevices();
  // The node service of a server that runs jobs on node agents (serve --nodes N);
  // Unimplemented for one that does not. JoinNode only registers (node agents use
  // NodeConnection); tests use it to speak the protocol by hand.
  StatusOr<proto::ListNodesResponse> ListNodes();
  StatusOr<proto::JoinNodeResponse> JoinNode(const proto::JoinNodeRequest& request);

  // Calls `on_event` for each event of the job from `from_sequence` on, in order. OK once the
  // terminal event was passed on, or `on_event` returned false; Cancelled after StopWatching;
  // the stream's error otherwise (Unavailable when the connection broke: watch again from the
  // sequence after the last one seen).
  Status Watch(const std::string& job_id, int64_t from_sequence,
               const std::function<bool(const proto::JobEvent&)>& on_event);

  // Calls `on_part` for each part of the job's results (job_service.proto, FetchResultsResponse)
  // in order; stops at the first error it returns.
  Status Fetch(const proto::FetchResultsRequest& request,
               const std::function<Status(const proto::FetchResultsResponse&)>& on_part);

  // The wait states of a running job of the server (live diagnosis).
  StatusOr<proto::GetWaitStatesResponse> GetWaitStates(const std::string& job_id,
                                                       std::chrono::milliseconds deadline);

  // Ends every Watch and Fetch in progress, and any started later, with Cancelled.
  void StopWatching();

 private:
  // The stubs and the streams in progress (job_client.cc).
  class Calls;
  void PrepareUnary(grpc::ClientContext* context) const;

  const JobClientOptions options_;
  std::unique_ptr<Calls> calls_;
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_RPC_JOB_CLIENT_H_
