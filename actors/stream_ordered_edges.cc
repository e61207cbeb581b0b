#include "actors/stream_ordered_edges.h"

#include <glog/logging.h>

#include <string>

#include "plan/labels.h"

namespace softwire {
namespace actors {
namespace {

bool ShareQueue(const std::vector<int64_t>& queue_of, ActorId a, ActorId b) {
  return queue_of[static_cast<size_t>(a)] >= 0 &&
         queue_of[static_cast<size_t>(a)] == queue_of[static_cast<size_t>(b)];
}

const OutputDescription* FindOutput(const ActorDescription& producer, RegisterId register_id) {
  for (const OutputDescription& output : producer.outputs) {
    if (output.register_id == register_id) return &output;
  }
  return nullptr;
}

// Whether `reader` may release its fills of `input` at launch: the slot's next writers are
// the producer (its next fill) and, for a phase-0 reader, the phase-1 consumer (it writes the
// same fill in place once every reader released it). Each must run after the reader's last
// firing on the fill, which only a shared queue guarantees when the release comes at launch.
bool MayReleaseAtLaunch(const std::vector<ActorDescription>& actors,
                        const std::vector<int64_t>& queue_of, const ActorDescription& reader,
                        const InputDescription& input) {
  if (!ShareQueue(queue_of, reader.id, input.producer)) return false;
  if (input.phase == 1) return true;
  const OutputDescription* output =
      FindOutput(actors[static_cast<size_t>(input.producer)], input.register_id);
  CHECK(output != nullptr) << reader.name << ": producer does not write register "
                           << input.register_id;
  for (const ConsumerDescription& consumer : output->consumers) {
    if (consumer.phase == 1 && !ShareQueue(queue_of, reader.id, consumer.actor)) return false;
  }
  return true;
}

}  // namespace

Status MarkStreamOrderedEdges(std::vector<ActorDescription>* actors,
                              const std::vector<int64_t>& queue_of) {
  if (queue_of.size() != actors->size()) {
    return InvalidArgumentError("MarkStreamOrderedEdges: " + std::to_string(queue_of.size()) +
                                " queue keys for " + std::to_string(actors->size()) + " actors");
  }
  for (const ActorDescription& actor : *actors) {
    const int64_t key = queue_of[static_cast<size_t>(actor.id)];
    if (key < -1) {
      return InvalidArgumentError(plan::ActorLabel(actor.name, actor.id) + ": queue key " +
                                  std::to_string(key) + ", must be -1 (no queue) or at least 0");
    }
  }
  for (ActorDescription& producer : *actors) {
    for (OutputDescription& output : producer.outputs) {
      for (ConsumerDescription& consumer : output.consumers) {
        consumer.ready_at_launch =
            consumer.phase == 0 && ShareQueue(queue_of, producer.id, consumer.actor);
      }
    }
  }
  for (ActorDescription& reader : *actors) {
    for (InputDescription& input : reader.inputs) {
      input.release_at_launch = MayReleaseAtLaunch(*actors, queue_of, reader, input);
    }
  }
  return Status::Ok();
}

}  // namespace actors
}  // namespace softwire
