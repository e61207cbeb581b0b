// MarkStreamOrderedEdges: which Readies and Releases an actor may send at a launch instead of
// at a completion, because both actors' kernels run in launch order on one in-order device
// queue (docs/PROTOCOL.md, "Stream-ordered edges"; docs/DECISIONS.md says why).
//
//   std::vector<ActorDescription> actors = *DescribeActors(plan);
//   std::vector<int64_t> queue_of(actors.size(), -1);
//   queue_of[id] = ...;  // The host's key of the in-order queue actor `id` runs on, or -1.
//   SOFTWIRE_RETURN_IF_ERROR(MarkStreamOrderedEdges(&actors, queue_of));
//   ActorProtocol protocol(&actors[id]);  // As always.
//
// A host that calls it takes on these duties (one that does not call it is unchanged):
//
// 1. queue_of[a] >= 0 only when every read and write firings of actor a make of register
//    slots is work the host enqueues on that queue when the firing launches, and the queue runs
//    its work one item after another in enqueue order (one CUDA stream of one device). Host
//    work counts only when it too is enqueued in stream order (cudaLaunchHostFunc, as the cuda
//    device's HostStagedKernel does for sources, sinks and variables). Two actors share a key
//    exactly when they share the queue. Everything else gets -1: actors that touch slots from
//    a host thread outside the queue (cpu devices' inline kernels need no marks: they complete
//    before the launch returns), send and recv over the network, actors whose kernels may run
//    on several queues, and actors whose completion must run host code before their Releases
//    (the checkpoint hook of an update actor).
// 2. When a call returns an Outbox holding a launch, the host enqueues that firing's work on
//    its queue BEFORE it sends any of the outbox's messages (they may carry a Ready or a
//    Release that lets another actor enqueue work that must run after it). This is the
//    reverse of what a host without marks may do.
// 3. The host still reports each firing's completion (OnFiringDone) only once its work has
//    finished running on the device, and every enqueued item eventually runs (no item on one
//    queue waits for another queue): completions still gate firing i + max_in_flight and send
//    the Readies and Releases of every unmarked edge and EndOfStream.
//
// Threading: none; call it before any ActorProtocol borrows `actors`. It never fails on a
// plan DescribeActors accepted, only on a malformed `queue_of`.
#ifndef SOFTWIRE_ACTORS_STREAM_ORDERED_EDGES_H_
#define SOFTWIRE_ACTORS_STREAM_ORDERED_EDGES_H_

#include <cstdint>
#include <vector>

#include "actors/actor_description.h"
#include "base/status.h"

namespace softwire {
namespace actors {

// Sets, in every description, each flag from `queue_of` (index: actor id; value: the queue
// key, or -1), true or false, so marking twice with other keys leaves only the second:
// - ConsumerDescription::ready_at_launch of a phase-0 consumer C of producer P's register:
//   C and P share a queue.
// - InputDescription::release_at_launch of actor A's input register R: A and R's producer
//   share a queue, and (A reading R in phase 0) so does R's phase-1 consumer, if it has one.
// InvalidArgument when queue_of's size is not the number of actors, or a key is below -1
// (naming the actor).
Status MarkStreamOrderedEdges(std::vector<ActorDescription>* actors,
                              const std::vector<int64_t>& queue_of);

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_STREAM_ORDERED_EDGES_H_
