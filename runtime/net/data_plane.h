// DataPlane: one process's end of the data plane between node processes. It listens on one
// TCP address (loopback by default) and, for each run of a hosted share that uses other nodes,
// connects to the processes hosting those nodes. Over it travel the protocol messages to
// remote actors (Ready, Release, EndOfStream: actors::ProtocolMessage) and the bytes of the
// wire registers that send actors fill on the receiving node (docs/DATA_PLANE.md).
//
// Orchestration (the node agent's job; every process of the job does each step before any
// process does the next):
//   1. host its share:     hosted = HostedPlan::Load(runtime, plan, "node1", job, data_root)
//                          with the same job id in every process, then hosted->Bind({})
//                          (no peers: their registers are reached through the data plane)
//   2. create the run:     run = Execution::Create(runtime, hosted, options)
//      and attach it:      attached = data_plane->Attach(hosted, run, {{"node0", "10.0.0.1:4100"}})
//   3. run:                status = run->Run();  then destroy `attached`, then `run`.
//
//   StatusOr<std::unique_ptr<DataPlane>> plane = DataPlane::Create(runtime, {});
//   std::string address = (*plane)->address();   // "127.0.0.1:41234": tell the other nodes
//
// Attach connects to every peer node of the share that is not yet connected (waiting up to
// DataPlaneOptions::connect_timeout), routes the run's messages for actors of those nodes over
// the connections, has the share's send actors transmit over them, and takes frames of the
// job from the peers: messages go to the run's PeerRouter, wire bytes into the hosted plan's
// slots. A message never overtakes the bytes it announces (one ordered stream per direction).
// Frames of a job that is not attached (unknown, or ended) are dropped and counted.
// A connection that breaks while a run uses it cancels that run (Execution::Cancel) with a
// reason naming the peer node and its address; Run then returns that error.
//
// Failure: Create fails when the address cannot be parsed or bound. Attach fails naming the
// node when a peer of the share has no address in `peers` or cannot be reached.
// Threading: every method is thread-safe. The data plane runs its own threads (one accepting,
// one reading per inbound connection, one writing per outbound connection); the destructor
// closes every socket and joins every thread.
// Ownership: borrows the runtime, which outlives it. An attachment borrows the data plane, the
// hosted plan and the execution: destroy it after Run returned and before the execution and the
// data plane.
#ifndef SOFTWIRE_RUNTIME_NET_DATA_PLANE_H_
#define SOFTWIRE_RUNTIME_NET_DATA_PLANE_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "base/status.h"

namespace softwire {
namespace runtime {

class Execution;
class HostedPlan;
class NodeRuntime;

namespace net {

struct DataPlaneOptions {
  // "host:port" to listen on; port 0 picks a free port (address() tells which).
  std::string listen_address = "127.0.0.1:0";
  // How long Attach waits for a peer's process to accept the connection.
  std::chrono::milliseconds connect_timeout{10000};
  // Wire bytes go out in chunks of this size (a system call, or a shared-memory cell, each).
  int64_t chunk_bytes = int64_t{1} << 20;
  // For a peer at a loopback address (the same host), wire bytes go through a shared-memory
  // ring (shm_ring.h) of this many chunks instead of the kernel's TCP stack; messages and the
  // fills' headers stay on the socket. 0: always the socket.
  int shared_memory_chunks = 8;
  // A fill of at most this many bytes that finds its stream idle is written on the send's own
  // thread (its device's strand); larger ones (and any that find the stream busy) by the
  // stream's writer thread while the device runs other kernels (outbound_stream.h).
  int64_t inline_write_bytes = int64_t{256} << 10;
};

class DataPlaneAttachment;

class DataPlane {
 public:
  // Listens on options.listen_address. `runtime` is the process's node runtime (may be null for
  // a data plane that only moves bytes, as in tests and benches).
  static StatusOr<std::unique_ptr<DataPlane>> Create(NodeRuntime* runtime,
                                                     DataPlaneOptions options);
  // Closes every connection and joins every thread. Every attachment is gone.
  virtual ~DataPlane() = default;

  // "host:port" the data plane listens on, for the other nodes.
  virtual std::string address() const = 0;

  // Attaches one run of one hosted share to the processes hosting the plan's other nodes:
  // `peers` maps node name -> address() of the data plane of the process hosting it (entries
  // for nodes the share does not talk to, and for the share's own node, are ignored). Call
  // after Execution::Create and before Run; the attachment lasts until it is destroyed (after
  // Run returned, however it ended). At most one attachment per job id at a time.
  virtual StatusOr<std::unique_ptr<DataPlaneAttachment>> Attach(
      HostedPlan* hosted, Execution* execution,
      const std::map<std::string, std::string>& peers) = 0;

  // Frames received for jobs that were not attached, since Create.
  virtual int64_t dropped_frames() const = 0;
};

// One run's attachment; destroying it detaches the run (its job's later frames are dropped).
class DataPlaneAttachment {
 public:
  virtual ~DataPlaneAttachment() = default;
};

}  // namespace net
}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_NET_DATA_PLANE_H_
