// The TCP data plane (data_plane.h): one listening socket with its accept thread, one reader
// thread per inbound connection, one OutboundStream (writer thread) per peer address, and the
// attached runs by job id.
#include "runtime/net/data_plane.h"

#include <glog/logging.h>

#include <list>
#include <set>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "runtime/host/execution.h"
#include "runtime/host/hosted_plan.h"
#include "runtime/host/peer_router.h"
#include "runtime/host/wire_transport.h"
#include "runtime/net/frame.h"
#include "runtime/net/frame_reader.h"
#include "runtime/net/outbound_stream.h"
#include "runtime/net/receive_buffer.h"
#include "runtime/net/shm_ring.h"
#include "runtime/net/socket.h"

namespace softwire {
namespace runtime {
namespace net {
namespace {

// Messages to the actors of one peer node go out on that node's stream.
class RemotePeerLink final : public PeerLink {
 public:
  explicit RemotePeerLink(std::shared_ptr<OutboundStream> stream) : stream_(std::move(stream)) {}
  void Send(const actors::ProtocolMessage& message) override { stream_->SendMessage(message); }

 private:
  std::shared_ptr<OutboundStream> stream_;
};

// A send's bytes go out on the stream to the node of its wire register.
class TcpWireTransport final : public WireTransport {
 public:
  void Add(const std::string& node, std::shared_ptr<OutboundStream> stream) {
    streams_[node] = std::move(stream);
  }
  void Write(const WireWrite& write, std::function<void(Status)> done) override {
    auto found = streams_.find(write.node);
    if (found == streams_.end()) {
      done(FailedPreconditionError("no data-plane connection to node '" + write.node + "'"));
      return;
    }
    FrameHeader header;
    header.type = FrameType::kWireBytes;
    header.job = write.job;
    header.register_id = write.register_id;
    header.slot = write.slot;
    header.payload_bytes = write.bytes;
    found->second->SendBytes(header, write.data, std::move(done), write.stopping);
  }

 private:
  std::map<std::string, std::shared_ptr<OutboundStream>> streams_;  // Read-only once attached.
};

class TcpDataPlane;

class Attachment final : public DataPlaneAttachment {
 public:
  Attachment(TcpDataPlane* plane, HostedPlan* hosted, Execution* execution)
      : plane(plane), hosted(hosted), execution(execution) {}
  ~Attachment() override;

  TcpDataPlane* const plane;
  HostedPlan* const hosted;
  Execution* const execution;
  std::map<std::string, std::string> node_of_address;  // Peers this run talks to.
  std::vector<std::unique_ptr<RemotePeerLink>> links;
  TcpWireTransport transport;
};

struct InboundConnection {
  Socket socket;
  std::string peer;               // Its hello's listen address, once read.
  std::unique_ptr<ShmRing> ring;  // The ring its hello offered, if any.
  std::thread reader;
  std::atomic<bool> ended{false};  // Its reader returned (it is joined at the next accept).
};

class TcpDataPlane final : public DataPlane {
 public:
  TcpDataPlane(DataPlaneOptions options, Socket listener, std::string address)
      : options_(std::move(options)), listener_(std::move(listener)), address_(address) {
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~TcpDataPlane() override;

  std::string address() const override { return address_; }
  StatusOr<std::unique_ptr<DataPlaneAttachment>> Attach(
      HostedPlan* hosted, Execution* execution,
      const std::map<std::string, std::string>& peers) override;
  int64_t dropped_frames() const override { return dropped_.load(); }

  void Detach(Attachment* attachment);

 private:
  StatusOr<std::shared_ptr<OutboundStream>> StreamTo(const std::string& address);
  void AcceptLoop();
  void ReadLoop(InboundConnection* connection);
  // Reads the connection's hello and frames (frame_reader.h) until it ends; why it ended.
  Status ReadFrames(InboundConnection* connection);
  void PeerFailed(const std::string& address, const Status& status);

  const DataPlaneOptions options_;
  Socket listener_;
  const std::string address_;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> dropped_{0};
  std::thread acceptor_;
  Mutex mutex_;  // Guards the connections.
  std::map<std::string, std::shared_ptr<OutboundStream>> outbound_ GUARDED_BY(mutex_);
  std::list<InboundConnection> inbound_ GUARDED_BY(mutex_);
  // Attached runs by job. Readers hold it shared while they deliver one frame, so a run is
  // detached only between frames (its slots are never written after Detach returned).
  std::shared_mutex jobs_mutex_;
  std::map<actors::JobId, Attachment*> jobs_;
};

Attachment::~Attachment() {
  plane->Detach(this);
  hosted->SetWireTransport(nullptr);
}

TcpDataPlane::~TcpDataPlane() {
  stopping_.store(true);
  listener_.Shutdown();
  acceptor_.join();
  std::list<InboundConnection> inbound;
  std::map<std::string, std::shared_ptr<OutboundStream>> outbound;
  {
    MutexLock lock(&mutex_);
    inbound.swap(inbound_);
    outbound.swap(outbound_);
  }
  for (InboundConnection& connection : inbound) connection.socket.Shutdown();
  for (InboundConnection& connection : inbound) connection.reader.join();
  outbound.clear();  // Joins the writers (attachments, which share them, are gone).
  listener_.Close();
}

StatusOr<std::shared_ptr<OutboundStream>> TcpDataPlane::StreamTo(const std::string& address) {
  MutexLock lock(&mutex_);
  auto found = outbound_.find(address);
  if (found != outbound_.end() && !found->second->broken()) return found->second;
  SOFTWIRE_ASSIGN_OR_RETURN(Socket socket, Socket::Connect(address, options_.connect_timeout));
  std::unique_ptr<ShmRing> ring;
  std::string payload = address_;
  if (options_.shared_memory_chunks > 0 && address.rfind("127.", 0) == 0) {  // Same host.
    StatusOr<std::unique_ptr<ShmRing>> created =
        ShmRing::Create(options_.shared_memory_chunks, options_.chunk_bytes);
    if (created.ok()) {
      ring = std::move(created).value();
      payload += "\n" + ring->name();
    } else {  // No /dev/shm here: the socket carries the bytes.
      LOG(WARNING) << "data plane: no shared memory for " << address << ": "
                   << created.status().message();
    }
  }
  FrameHeader hello;
  hello.type = FrameType::kHello;
  hello.payload_bytes = static_cast<int64_t>(payload.size());
  SOFTWIRE_RETURN_IF_ERROR(socket.SendAll(&hello, sizeof(hello)));
  SOFTWIRE_RETURN_IF_ERROR(socket.SendAll(payload.data(), hello.payload_bytes));
  auto stream = std::make_shared<OutboundStream>(
      std::move(socket), address, options_.chunk_bytes,
      [this, address](const Status& status) { PeerFailed(address, status); }, std::move(ring),
      options_.inline_write_bytes);
  outbound_[address] = stream;
  return stream;
}

StatusOr<std::unique_ptr<DataPlaneAttachment>> TcpDataPlane::Attach(
    HostedPlan* hosted, Execution* execution, const std::map<std::string, std::string>& peers) {
  const proto::Plan& plan = hosted->plan();
  std::set<std::string> nodes;
  for (const proto::PlanDevice& device : plan.device()) {
    if (device.node() != hosted->node()) nodes.insert(device.node());
  }
  auto attachment = std::make_unique<Attachment>(this, hosted, execution);
  for (const std::string& node : nodes) {
    SOFTWIRE_ASSIGN_OR_RETURN(std::vector<int64_t> actors, hosted->ActorsOf(node));
    if (actors.empty()) continue;
    auto address = peers.find(node);
    if (address == peers.end()) {
      return NotFoundError("job '" + plan.job_name() + "': no data-plane address for node '" +
                           node + "'");
    }
    StatusOr<std::shared_ptr<OutboundStream>> stream = StreamTo(address->second);
    if (!stream.ok()) return stream.status().WithContext("node '" + node + "'");
    attachment->links.push_back(std::make_unique<RemotePeerLink>(*stream));
    execution->router().ConnectPeer(actors, attachment->links.back().get());
    attachment->transport.Add(node, *stream);
    attachment->node_of_address[address->second] = node;
  }
  {
    std::unique_lock<std::shared_mutex> lock(jobs_mutex_);
    if (jobs_.count(hosted->job()) != 0) {
      return FailedPreconditionError("job " + std::to_string(hosted->job()) +
                                     " is attached to the data plane already");
    }
    jobs_[hosted->job()] = attachment.get();
  }
  hosted->SetWireTransport(&attachment->transport);
  return std::unique_ptr<DataPlaneAttachment>(std::move(attachment));
}

void TcpDataPlane::Detach(Attachment* attachment) {
  std::unique_lock<std::shared_mutex> lock(jobs_mutex_);
  auto found = jobs_.find(attachment->hosted->job());
  if (found != jobs_.end() && found->second == attachment) jobs_.erase(found);
}

void TcpDataPlane::PeerFailed(const std::string& address, const Status& status) {
  if (stopping_.load()) return;
  std::shared_lock<std::shared_mutex> lock(jobs_mutex_);
  for (const auto& [job, attachment] : jobs_) {
    auto node = attachment->node_of_address.find(address);
    if (node == attachment->node_of_address.end()) continue;
    LOG(WARNING) << "data plane: job " << job << " loses node '" << node->second << "' (" << address
                 << "): " << status.message();
    attachment->execution->Cancel("data plane: node '" + node->second + "' (" + address +
                                  ") is unreachable: " + status.message());
  }
}

void TcpDataPlane::AcceptLoop() {
  while (!stopping_.load()) {
    StatusOr<Socket> socket = listener_.Accept();
    if (!socket.ok()) return;  // Shut down (or the listener failed: no more peers).
    MutexLock lock(&mutex_);
    if (stopping_.load()) return;
    inbound_.remove_if([](InboundConnection& ended) {  // Peers gone: join and close.
      if (!ended.ended.load()) return false;
      ended.reader.join();
      return true;
    });
    inbound_.emplace_back();
    InboundConnection* connection = &inbound_.back();
    connection->socket = std::move(socket).value();
    connection->reader = std::thread([this, connection] { ReadLoop(connection); });
  }
}

// An inbound connection's socket and ring, as the frame reader reads them: the socket through
// a small buffer, so that frames queued one after another (a fill's header, Readies,
// Releases) come in with one system call (receive_buffer.h).
class ConnectionSource final : public FrameSource {
 public:
  ConnectionSource(InboundConnection* connection, const std::atomic<bool>* stopping)
      : connection_(connection), stopping_(stopping), buffer_(&connection->socket) {}
  Status ReceiveAll(void* data, int64_t bytes) override { return buffer_.ReceiveAll(data, bytes); }
  Status ReceiveRing(char* into, int64_t bytes) override {
    return connection_->ring->Read(
        into, bytes, [this] { return !stopping_->load() && !connection_->socket.PeerClosed(); });
  }

 private:
  InboundConnection* const connection_;
  const std::atomic<bool>* const stopping_;
  ReceiveBuffer buffer_;
};

// Frames to the attached runs, by the job they name; the reader holds jobs_mutex_ shared while
// it delivers one frame, so a run is detached only between frames.
class AttachedRuns final : public FrameHandler {
 public:
  AttachedRuns(const std::map<actors::JobId, Attachment*>& jobs, std::atomic<int64_t>* dropped)
      : jobs_(jobs), dropped_(dropped) {}
  void OnMessage(const FrameHeader& header, const actors::ProtocolMessage& message) override {
    Attachment* attachment = Find(header.job);
    if (attachment == nullptr || message.job != header.job) {
      dropped_->fetch_add(1);
      return;
    }
    attachment->execution->router().Send(message);
  }
  char* FillDestination(const FrameHeader& header) override {
    Attachment* attachment = Find(header.job);
    if (attachment == nullptr) {
      dropped_->fetch_add(1);
      return nullptr;
    }
    const RegisterSlots& slots = attachment->hosted->register_slots();
    Status fits = CheckFill(header, slots, attachment->hosted->plan());
    if (!fits.ok()) {
      dropped_->fetch_add(1);
      attachment->execution->Cancel("data plane: " + fits.message());
      return nullptr;
    }
    // A sim device's slot has no address: its bytes are skipped.
    return slots[static_cast<size_t>(header.register_id)][static_cast<size_t>(header.slot)];
  }
  void OnDropped(const FrameHeader& /*header*/) override { dropped_->fetch_add(1); }

 private:
  Attachment* Find(actors::JobId job) const {
    auto found = jobs_.find(job);
    return found == jobs_.end() ? nullptr : found->second;
  }

  const std::map<actors::JobId, Attachment*>& jobs_;
  std::atomic<int64_t>* const dropped_;
};

void TcpDataPlane::ReadLoop(InboundConnection* connection) {
  Status status = ReadFrames(connection);
  if (!status.ok() && connection->peer.empty()) {
    LOG(WARNING) << "data plane " << address_ << ": refused a connection: " << status.message();
    connection->socket.Shutdown();
  } else if (!stopping_.load()) {
    PeerFailed(connection->peer, status);
  }
  connection->ended.store(true);
}

Status TcpDataPlane::ReadFrames(InboundConnection* connection) {
  ConnectionSource source(connection, &stopping_);
  Hello hello;
  SOFTWIRE_RETURN_IF_ERROR(ReadHello(source, &hello));
  if (!hello.ring_name.empty()) {  // It offers a same-host ring.
    SOFTWIRE_ASSIGN_OR_RETURN(connection->ring, ShmRing::Open(hello.ring_name));
  }
  connection->peer = hello.peer_address;
  AttachedRuns runs(jobs_, &dropped_);
  for (;;) {
    FrameHeader header;
    SOFTWIRE_RETURN_IF_ERROR(ReadFrameHeader(source, &header));
    std::shared_lock<std::shared_mutex> lock(jobs_mutex_);
    SOFTWIRE_RETURN_IF_ERROR(DeliverFrame(header, source, connection->ring != nullptr, runs));
  }
}

}  // namespace

StatusOr<std::unique_ptr<DataPlane>> DataPlane::Create(NodeRuntime* /*runtime*/,
                                                       DataPlaneOptions options) {
  SOFTWIRE_ASSIGN_OR_RETURN(Socket listener, Socket::Listen(options.listen_address));
  SOFTWIRE_ASSIGN_OR_RETURN(std::string address, listener.LocalAddress());
  return std::unique_ptr<DataPlane>(
      new TcpDataPlane(std::move(options), std::move(listener), std::move(address)));
}

}  // namespace net
}  // namespace runtime
}  // namespace softwire
