// OutputSide: the slots of the registers an actor writes (docs/PROTOCOL.md, "Outputs" and
// "Slots come back").
//
// Per output register: how many fills were begun, completed and freed. Fill f lies in slot
// f % slots and fills free in order, so a fill may begin once `begun - freed < slots`. Per slot:
// how many releases its current fill still awaits. With consumers marked ready_at_launch
// (MarkStreamOrderedEdges) a fill is offered when the firing that completes it launches: those
// consumers get their Ready then, the others at the completion as always. Per consumer: how
// many Readies it was sent
// and how many fills it released, so it holds exactly fills [released, readies_sent) and a
// Release must name the oldest of them. A phase-1 consumer (in-place writer) is sent Ready once
// the phase-0 consumers released the fill, and EndOfStream after its last Ready.
//
// Part of ActorProtocol's live state; not thread-safe. Borrows the description. Every vector is
// sized at construction: no call allocates except to report a violation.
#ifndef SOFTWIRE_ACTORS_OUTPUT_SIDE_H_
#define SOFTWIRE_ACTORS_OUTPUT_SIDE_H_

#include <cstdint>
#include <vector>

#include "actors/actor_description.h"
#include "actors/actor_protocol.h"
#include "actors/messages.h"
#include "base/status.h"
#include "plan/fill_arithmetic.h"

namespace softwire {
namespace actors {

class OutputSide {
 public:
  explicit OutputSide(const ActorDescription* actor);

  // The first output whose fill firing `index` begins has no free slot, or -1.
  int FirstBlockedOutput(int64_t index) const;
  // Binds each output's slot for firing `index` (in output order) and begins the fills it
  // begins. Call only when FirstBlockedOutput(index) == -1.
  void BeginFiring(int64_t index, std::vector<SlotBinding>* bindings,
                   std::vector<bool>* fill_begins);
  // After BeginFiring(index): for every output whose fill firing `index` completes and that
  // has consumers marked ready_at_launch, offers the fill now (docs/PROTOCOL.md,
  // "Stream-ordered edges"): Ready to those consumers, in output and plan order; the fill's
  // slot then awaits every consumer's Release.
  void OfferAtLaunch(int64_t index, Outbox* outbox);
  // After firing `index` completed: Ready for every fill it completed, in output order, to
  // the phase-0 consumers not offered it at launch, in plan order (to the phase-1 consumer
  // when there are none).
  void CompleteFiring(int64_t index, Outbox* outbox);
  // After the last firing: EndOfStream to every consumer, in output and plan order; a phase-1
  // consumer that still awaits Readies gets it right after its last one.
  void EndStreams(Outbox* outbox);

  // Records a Release, perhaps offering the fill to the phase-1 consumer or freeing its slot.
  // Fails (InvalidArgument naming actor and register) when the actor does not write the
  // register, `from` is not its consumer, or `from` does not hold that fill in that slot.
  Status AcceptRelease(ActorId from, const Release& release, Outbox* outbox);

  // Every fill of every output was freed.
  bool all_slots_back() const { return returned_outputs_ == static_cast<int>(outputs_.size()); }
  // Slots of `output` begun and not yet freed (being written, or held by consumers).
  int occupied_slots(int output) const;

  // For DescribeWait: the first output with fills not yet freed, or -1; the oldest fill not
  // freed; the consumers still to release it (phase 0 first; the writer once they are done).
  int FirstUnreturnedOutput() const;
  int64_t oldest_unfreed_fill(int output) const { return outputs_[output].freed; }
  void AppendHolders(int output, std::vector<ActorId>* holders) const;

 private:
  // Per consumer: a copy of its description (so a Release touches this record only) and what
  // it was sent and gave back.
  struct Consumer {
    ActorId actor = -1;
    int phase = 0;
    bool ready_at_launch = false;
    int64_t readies_sent = 0;
    int64_t released = 0;
    bool end_sent = false;
  };
  // Periods enter only as `ratio` = register period / actor period (1 for a per-piece output
  // of a per-piece actor), which spares a division in the common case; slot numbers advance as
  // counters instead of taking a modulo.
  struct Output {
    int64_t ratio = 1;  // Firings per fill.
    int64_t total_fills = 0;
    int slots = 1;
    int phase0_count = 0;
    int ready_at_launch_count = 0;  // Phase-0 consumers offered each fill at launch.
    int writer = -1;                // Index of the phase-1 consumer, or -1.
    int first_consumer = 0;         // Into consumers_.
    int consumer_count = 0;
    int first_slot = 0;  // Into remaining_releases_.
    int64_t begun = 0;
    int64_t completed = 0;
    int64_t freed = 0;
    int begun_slot = 0;       // begun % slots.
    int last_begun_slot = 0;  // Slot of fill begun - 1, the one being written.
    int completed_slot = 0;   // completed % slots.
  };

  int64_t FillOf(const Output& output, int64_t index) const {
    return plan::FillOfFiring(index, output.ratio);
  }
  int FindOutput(RegisterId register_id) const;
  int FindConsumer(int output, ActorId actor) const;
  void SendReady(int output, int consumer, int64_t fill, int slot, Outbox* outbox);
  void SendEndOfStream(int output, int consumer, Outbox* outbox);
  void FreeFill(int output, int64_t fill);
  // The fill in `slot` now awaits a Release from every consumer.
  void AwaitReleases(int output, int slot) {
    const Output& state = outputs_[output];
    remaining_releases_[state.first_slot + slot] = state.phase0_count + (state.writer >= 0 ? 1 : 0);
  }
  Status Violation(int output, const std::string& what) const;

  const ActorDescription* actor_;
  int64_t period_ = 1;
  bool streams_ended_ = false;         // EndStreams was called.
  std::vector<RegisterId> registers_;  // Per output, scanned on each Release.
  std::vector<Output> outputs_;
  std::vector<Consumer> consumers_;      // Flat: output o's consumers from first_consumer.
  std::vector<int> remaining_releases_;  // Flat: output o's slots from first_slot.
  int returned_outputs_ = 0;
  int outputs_offered_at_launch_ = 0;  // OfferAtLaunch returns at once while 0.
};

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_OUTPUT_SIDE_H_
