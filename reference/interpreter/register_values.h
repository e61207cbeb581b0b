// RegisterValues: the fills of every register during a reference run. Fill f of a register is
// one ReferenceTensor, written by its producer (over several firings for an accumulation) and
// kept until every consumer has read it for the last time, so memory stays bounded by what the
// plan's slots would hold, plus whatever a late reader forces the interpreter to keep.
// Internal to reference/interpreter/. Not thread-safe.
#ifndef SOFTWIRE_REFERENCE_INTERPRETER_REGISTER_VALUES_H_
#define SOFTWIRE_REFERENCE_INTERPRETER_REGISTER_VALUES_H_

#include <cstdint>
#include <map>
#include <vector>

#include "proto/plan.pb.h"
#include "reference/kernels/reference_tensor.h"

namespace softwire {
namespace reference {

class RegisterValues {
 public:
  explicit RegisterValues(const proto::Plan& plan);

  // Fill `fill` of register `r` is complete: its producer finished writing it.
  bool IsComplete(int64_t r, int64_t fill) const { return fill < registers_[r].completed; }
  // The value of a fill being written or complete (created empty on first use).
  ReferenceTensor& Value(int64_t r, int64_t fill) { return registers_[r].values[fill]; }
  const ReferenceTensor& CompleteValue(int64_t r, int64_t fill) const;
  // The producer finished fill `fill` (fills complete in order).
  void Complete(int64_t r, int64_t fill);
  // Consumer `actor` read fill `fill` for the last time (consumers release in order).
  void Release(int64_t r, int64_t actor, int64_t fill);

  // Every phase-0 consumer of `r` released `fill`.
  bool ReadersReleased(int64_t r, int64_t fill) const;
  // The phase-1 consumer of `r`, if any, released every fill before `fill`.
  bool WriterReleasedBefore(int64_t r, int64_t fill) const;

 private:
  struct Consumer {
    int64_t actor = -1;
    int phase = 0;
    int64_t released = 0;  // Fills [0, released) read for the last time.
  };
  struct Fills {
    std::map<int64_t, ReferenceTensor> values;
    int64_t completed = 0;
    std::vector<Consumer> consumers;
  };

  // Drops the fills every consumer is done with.
  void Collect(Fills* fills);

  std::vector<Fills> registers_;
};

}  // namespace reference
}  // namespace softwire

#endif  // SOFTWIRE_REFERENCE_INTERPRETER_REGISTER_VALUES_H_
