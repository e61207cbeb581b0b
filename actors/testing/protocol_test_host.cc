#include "actors/testing/protocol_test_host.h"

#include <glog/logging.h>

#include <algorithm>
#include <utility>

namespace softwire {
namespace actors {
namespace testing {

StatusOr<std::unique_ptr<ProtocolTestHost>> ProtocolTestHost::Create(const proto::Plan& plan,
                                                                     Options options) {
  SOFTWIRE_ASSIGN_OR_RETURN(std::vector<ActorDescription> actors, DescribeActors(plan));
  return std::make_unique<ProtocolTestHost>(std::move(actors), std::move(options));
}

ProtocolTestHost::ProtocolTestHost(std::vector<ActorDescription> actors, Options options)
    : options_(std::move(options)), actors_(std::move(actors)), random_(options_.seed) {
  for (const ActorDescription& actor : actors_) {
    protocols_.push_back(std::make_unique<ActorProtocol>(&actor));
    running_.emplace_back();
    for (const OutputDescription& output : actor.outputs) {
      register_names_[output.register_id] = output.register_name;
    }
  }
}

void ProtocolTestHost::Record(std::string line) {
  if (options_.record) transcript_.push_back(std::move(line));
}

std::vector<std::string> ProtocolTestHost::TakeTranscript() {
  std::vector<std::string> lines(transcript_.begin() + taken_, transcript_.end());
  taken_ = transcript_.size();
  return lines;
}

ActorId ProtocolTestHost::id(const std::string& actor) const {
  for (const ActorDescription& description : actors_) {
    if (description.name == actor) return description.id;
  }
  LOG(FATAL) << "no actor named " << actor;
  return -1;
}

ActorProtocol& ProtocolTestHost::protocol(const std::string& actor) {
  return *protocols_[id(actor)];
}

bool ProtocolTestHost::AllFinished() const {
  for (const std::unique_ptr<ActorProtocol>& protocol : protocols_) {
    if (!protocol->finished()) return false;
  }
  return true;
}

std::string ProtocolTestHost::Describe(ActorId from, const OutgoingMessage& message) const {
  auto name = [this](RegisterId id) {
    auto found = register_names_.find(id);
    return found == register_names_.end() ? std::to_string(id) : found->second;
  };
  std::string line = actors_[from].name + " -> " +
                     (message.to >= 0 && message.to < static_cast<ActorId>(actors_.size())
                          ? actors_[message.to].name
                          : std::to_string(message.to)) +
                     ": ";
  switch (message.type) {
    case OutgoingMessage::Type::kReady:
      return line + "Ready(" + name(message.ready().register_id) + ", slot " +
             std::to_string(message.ready().slot) + ", seq " +
             std::to_string(message.ready().sequence) + ")";
    case OutgoingMessage::Type::kRelease:
      return line + "Release(" + name(message.release().register_id) + ", slot " +
             std::to_string(message.release().slot) + ", seq " +
             std::to_string(message.release().sequence) + ")";
    case OutgoingMessage::Type::kEndOfStream:
      return line + "EndOfStream(" + name(message.end_of_stream().register_id) + ")";
  }
  return line;
}

Status ProtocolTestHost::Handle(ActorId actor, Outbox* outbox) {
  while (true) {
    for (const OutgoingMessage& message : outbox->messages) {
      if (options_.on_send) options_.on_send(actor, message);
      if (options_.record) Record(Describe(actor, message));
      queue_.push_back(Envelope{actor, message});
    }
    if (outbox->finished) Record(actors_[actor].name + ": finished");
    if (!outbox->launch) return Status::Ok();
    const int64_t index = outbox->launch->index;
    Record(actors_[actor].name + ": launch " + std::to_string(index));
    if (options_.on_launch) options_.on_launch(actor, *outbox->launch);
    if (!options_.complete_immediately) {
      running_[actor].push_back(index);
      outbox->clear();
      protocols_[actor]->LaunchAnother(outbox);  // Nothing at max_in_flight 1.
      continue;
    }
    if (options_.on_complete) options_.on_complete(actor, index);
    outbox->clear();
    SOFTWIRE_RETURN_IF_ERROR(protocols_[actor]->OnFiringDone(index, outbox));
  }
}

void ProtocolTestHost::Start() {
  Outbox outbox;
  for (const ActorDescription& actor : actors_) {
    outbox.clear();
    protocols_[actor.id]->Start(&outbox);
    CHECK(Handle(actor.id, &outbox).ok());
  }
}

Status ProtocolTestHost::Deliver(const Envelope& envelope, Outbox* outbox) {
  const OutgoingMessage& message = envelope.message;
  ActorProtocol& receiver = *protocols_[message.to];
  switch (message.type) {
    case OutgoingMessage::Type::kReady:
      return receiver.OnReady(envelope.from, message.ready(), outbox);
    case OutgoingMessage::Type::kRelease:
      return receiver.OnRelease(envelope.from, message.release(), outbox);
    case OutgoingMessage::Type::kEndOfStream:
      return receiver.OnEndOfStream(envelope.from, message.end_of_stream(), outbox);
  }
  return InternalError("unknown message type");
}

Status ProtocolTestHost::Inject(ActorId from, ActorId to, const OutgoingMessage& message) {
  Outbox outbox;
  OutgoingMessage addressed = message;
  addressed.to = to;
  SOFTWIRE_RETURN_IF_ERROR(Deliver(Envelope{from, addressed}, &outbox));
  return Handle(to, &outbox);
}

Status ProtocolTestHost::Complete(const std::string& actor) {
  const ActorId actor_id = id(actor);
  CHECK(!running_[actor_id].empty()) << actor << " runs no firing";
  return CompleteFiring(actor_id, running_[actor_id].front());
}

Status ProtocolTestHost::CompleteFiring(ActorId actor_id, int64_t index) {
  std::vector<int64_t>& running = running_[actor_id];
  auto found = std::find(running.begin(), running.end(), index);
  CHECK(found != running.end()) << actors_[actor_id].name << " runs no firing " << index;
  running.erase(found);
  if (options_.on_complete) options_.on_complete(actor_id, index);
  Outbox outbox;
  SOFTWIRE_RETURN_IF_ERROR(protocols_[actor_id]->OnFiringDone(index, &outbox));
  return Handle(actor_id, &outbox);
}

StatusOr<bool> ProtocolTestHost::Step() {
  size_t choice = 0;
  if (options_.order == Order::kRandom) {
    // Completable firings: each actor's oldest in flight, or any with reorder_completions.
    std::vector<std::pair<ActorId, int64_t>> running;
    if (!options_.complete_immediately && options_.step_completes_firings) {
      for (size_t a = 0; a < running_.size(); ++a) {
        for (int64_t index : running_[a]) {
          running.emplace_back(static_cast<ActorId>(a), index);
          if (!options_.reorder_completions) break;
        }
      }
    }
    const size_t options = queue_.size() + running.size();
    if (options == 0) return false;
    choice = std::uniform_int_distribution<size_t>(0, options - 1)(random_);
    if (choice >= queue_.size()) {
      const std::pair<ActorId, int64_t>& firing = running[choice - queue_.size()];
      SOFTWIRE_RETURN_IF_ERROR(CompleteFiring(firing.first, firing.second));
      return true;
    }
    // Deliver the oldest message of the chosen message's (sender, receiver) pair.
    for (size_t i = 0; i < choice; ++i) {
      if (queue_[i].from == queue_[choice].from &&
          queue_[i].message.to == queue_[choice].message.to) {
        choice = i;
        break;
      }
    }
  } else if (queue_.empty()) {
    return false;
  }
  const Envelope envelope = queue_[choice];
  queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(choice));
  Outbox outbox;
  SOFTWIRE_RETURN_IF_ERROR(Deliver(envelope, &outbox));
  SOFTWIRE_RETURN_IF_ERROR(Handle(envelope.message.to, &outbox));
  return true;
}

Status ProtocolTestHost::Run() {
  while (true) {
    SOFTWIRE_ASSIGN_OR_RETURN(bool stepped, Step());
    if (!stepped) return Status::Ok();
  }
}

}  // namespace testing
}  // namespace actors
}  // namespace softwire
