// InputSide: what an actor has received of the registers it reads (docs/PROTOCOL.md, "Inputs").
//
// One channel per distinct input register (an actor that lists a register twice, as in
// mul(x, x), is one consumer of it). Fill f of a register always lies in slot f % slots, and
// fills arrive and are released in sequence order, so a channel is three counters: the fills
// received, the fills released, and whether EndOfStream came. The fills held are exactly
// [released, received): the oldest is the one the next firing needs.
//
// Part of ActorProtocol's live state; not thread-safe. Borrows the description.
#ifndef SOFTWIRE_ACTORS_INPUT_SIDE_H_
#define SOFTWIRE_ACTORS_INPUT_SIDE_H_

#include <cstdint>
#include <vector>

#include "actors/actor_description.h"
#include "actors/actor_protocol.h"
#include "actors/messages.h"
#include "base/status.h"
#include "plan/fill_arithmetic.h"

namespace softwire {
namespace actors {

class InputSide {
 public:
  explicit InputSide(const ActorDescription* actor);

  // Records a Ready, or fails (InvalidArgument naming actor and register) when `from` is not
  // the register's producer, the actor does not read it, the fill is out of sequence or in
  // the wrong slot, more fills than slots are held, or the register already ended.
  Status AcceptReady(ActorId from, const Ready& ready);
  // Records EndOfStream; fails likewise, or when fills are still missing.
  Status AcceptEndOfStream(ActorId from, const EndOfStream& end_of_stream);

  // The first channel that lacks the fill firing `index` needs, or -1 when all have it.
  // `oldest`: firing `index` is the first not yet completed (nothing in flight), so it needs
  // each channel's oldest held fill and the count of empty channels answers without a scan;
  // a firing launched ahead of others in flight may need a newer fill, so it scans.
  int FirstMissingFill(int64_t index, bool oldest = true) const;
  // Appends one binding per kernel input for firing `index` (all fills present).
  void BindInputs(int64_t index, std::vector<SlotBinding>* bindings) const;
  // After firing `index` launched: releases each fill no later firing needs of the channels
  // marked release_at_launch (docs/PROTOCOL.md, "Stream-ordered edges"), in input order.
  void ReleaseAtLaunch(int64_t index, Outbox* outbox);
  // After firing `index` completed: releases each fill no later firing needs of the other
  // channels, in input order.
  void ReleaseFinishedFills(int64_t index, Outbox* outbox);

  bool all_ended() const { return ended_channels_ == static_cast<int>(channels_.size()); }
  int channel_count() const { return static_cast<int>(channels_.size()); }
  // For DescribeWait: the channel's register, producer, needed fill and end state.
  const InputDescription& channel_input(int channel) const;
  int64_t FillNeeded(int channel, int64_t index) const;
  bool ended(int channel) const { return channels_[channel].ended; }

 private:
  // Everything the hot path needs about one input register, copied from its description so
  // a message touches one record. Periods enter only as `ratio` = register period / actor
  // period (1 for a per-piece input of a per-piece actor), which spares a division in the
  // common case; slot numbers advance as counters instead of taking a modulo.
  struct Channel {
    RegisterId register_id = -1;
    ActorId producer = -1;
    int64_t ratio = 1;        // Firings per fill.
    int64_t total_fills = 0;  // total_pieces / period.
    int64_t received = 0;     // Next sequence expected.
    int64_t released = 0;     // Oldest fill still held.
    int slots = 1;
    int received_slot = 0;  // received % slots.
    int released_slot = 0;  // released % slots.
    int input = 0;          // First kernel input reading the register.
    bool ended = false;
    bool release_at_launch = false;  // Released when the last reading firing launches.
  };

  // The channel of `register_id`, or -1.
  int FindChannel(RegisterId register_id) const;
  Status CheckSender(int channel, ActorId from, const char* message_name,
                     RegisterId register_id) const;
  Status Violation(int channel, const std::string& what) const;
  // Sends the Release of the oldest fill `state` holds.
  void ReleaseOldest(Channel* state, Outbox* outbox);
  int64_t FillOf(const Channel& channel, int64_t index) const {
    return plan::FillOfFiring(index, channel.ratio);
  }
  static void Advance(int slots, int* slot) {
    if (++*slot == slots) *slot = 0;
  }

  const ActorDescription* actor_;
  int64_t period_ = 1;
  std::vector<RegisterId> channel_registers_;  // Parallel to channels_, scanned on each message.
  std::vector<Channel> channels_;
  std::vector<int> channel_of_input_;  // Per kernel input.
  int ended_channels_ = 0;
  int channels_released_at_launch_ = 0;  // ReleaseAtLaunch returns at once while 0.
  // Channels holding no fill (received == released). Firing next_firing needs exactly the
  // oldest fill each channel holds (fills are released in order, each after the last firing
  // that reads it), so while this is 0 no input is missing and TryLaunch skips the scan.
  int empty_channels_ = 0;
};

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_INPUT_SIDE_H_
