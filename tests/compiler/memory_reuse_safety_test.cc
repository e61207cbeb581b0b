// Lifetime-based reuse, checked from outside the proof: compiled plans whose registers share
// bytes (share_memory_pass, plan/register_lifetimes.h) run under many seeded random firing
// orders in the deterministic protocol host (random message interleavings within each sender
// and receiver pair, random kernel completion times). A model watching every launch,
// completion and Release asserts that no fill begins in a register while a register sharing its
// bytes still holds a fill (written and not yet released by every consumer), and that every
// firing reading a register through a view (a reshape or transpose folded away, its kernel's
// input descriptor differing from the register's tensor) reads a fill the register still holds:
// the view's readers count among the register's consumers for release and for reuse. An
// output written in place over an input (laid out identically) may begin its fill only in the
// slot of the fill its writer reads in that firing, and only once every other consumer released
// it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "actors/actor_protocol.h"
#include "actors/testing/protocol_test_host.h"
#include "base/file.h"
#include "compiler/compiler.h"
#include "compiler/testing/compiler_test_util.h"
#include "placement/cluster_spec.h"
#include "plan/ordering_inputs.h"
#include "plan/steps.h"

namespace softwire {
namespace compiler {
namespace {

using actors::ActorDescription;
using actors::ActorId;
using actors::Firing;
using actors::OutgoingMessage;
using actors::OutputDescription;
using actors::RegisterId;
using actors::SlotBinding;
using actors::testing::ProtocolTestHost;

// Fills each register holds, from the launch of the firing that begins one until every
// consumer released it (or, without consumers, until the firing that completes it).
class SharedBytesModel {
 public:
  SharedBytesModel(const proto::Plan& plan, const std::vector<ActorDescription>* actors)
      : actors_(actors) {
    for (const proto::RegisterDef& reg : plan.register_def()) {
      shares_[reg.id()].insert(reg.shares_bytes_with().begin(), reg.shares_bytes_with().end());
      layouts_[reg.id()] = {reg.offset(), reg.slots(), reg.bytes_per_slot()};
    }
    for (const ActorDescription& actor : *actors) {
      for (const OutputDescription& output : actor.outputs) outputs_[output.register_id] = &output;
    }
    for (const proto::ActorDef& actor : plan.actor()) {
      if (actor.kernel().input_size() == 0) continue;
      for (int k = 0; k < plan::KernelInputCount(actor); ++k) {  // Not the ordering inputs.
        const proto::TensorDesc& read = actor.kernel().input(k);
        const proto::TensorDesc& held = plan.register_def(actor.input_register(k)).tensor();
        if (!std::equal(read.dims().begin(), read.dims().end(), held.dims().begin(),
                        held.dims().end())) {
          views_.insert({actor.id(), k});
        }
      }
    }
  }

  void OnLaunch(ActorId id, const Firing& firing) {
    const ActorDescription& actor = (*actors_)[id];
    for (size_t k = 0; k < firing.inputs.size(); ++k) {
      if (views_.count({id, static_cast<int>(k)}) == 0) continue;
      ++view_reads_;
      const SlotBinding& read = firing.inputs[k];
      if (live_.count({read.register_id, read.sequence}) == 0 && first_violation_.empty()) {
        first_violation_ = actor.name + " reads fill " + std::to_string(read.sequence) +
                           " of register " + std::to_string(read.register_id) +
                           " through a view after every consumer released it";
      }
    }
    for (size_t o = 0; o < actor.outputs.size(); ++o) {
      if (!firing.output_fill_begins[o]) continue;
      const RegisterId written = actor.outputs[o].register_id;
      const int64_t sequence = firing.outputs[o].sequence;
      for (RegisterId other : shares_[written]) {
        ++shared_writes_;
        const int64_t held = HeldFillInTheWay(written, sequence, other, firing);
        if (held >= 0 && first_violation_.empty()) {
          first_violation_ = actor.name + " begins fill " + std::to_string(sequence) + " of '" +
                             actor.outputs[o].register_name + "' while register " +
                             std::to_string(other) + ", which shares its bytes, holds fill " +
                             std::to_string(held);
        }
      }
      live_.insert({written, firing.outputs[o].sequence});
    }
  }

  void OnComplete(ActorId id, int64_t index) {
    const ActorDescription& actor = (*actors_)[id];
    for (const OutputDescription& output : actor.outputs) {
      const bool completes = ((index + 1) * actor.period) % output.period == 0;
      if (completes && output.consumers.empty()) {
        live_.erase({output.register_id, (index + 1) * actor.period / output.period - 1});
      }
    }
  }

  void OnSend(const OutgoingMessage& message) {
    if (message.type != actors::MessageType::kRelease) return;
    const RegisterId id = message.register_id;
    int& releases = releases_[{id, message.sequence}];
    if (++releases == static_cast<int>(outputs_[id]->consumers.size())) {
      live_.erase({id, message.sequence});
    }
  }

  int64_t shared_writes() const { return shared_writes_; }
  int64_t in_place_writes() const { return in_place_writes_; }
  int64_t view_reads() const { return view_reads_; }
  // "" when no fill began in bytes another register held.
  const std::string& first_violation() const { return first_violation_; }

 private:
  struct Layout {
    int64_t offset = 0;
    int64_t slots = 1;
    int64_t bytes_per_slot = 0;
    bool operator==(const Layout& other) const {
      return offset == other.offset && slots == other.slots &&
             bytes_per_slot == other.bytes_per_slot;
    }
  };

  // A fill `other` holds in the bytes fill `sequence` of `written` is about to take, or -1.
  // Registers laid out identically overlap only slot by slot. The one fill allowed there is
  // the one this very firing reads and no other consumer still holds: an in-place write by
  // its last reader (docs/PROTOCOL.md, "In-place ops").
  int64_t HeldFillInTheWay(RegisterId written, int64_t sequence, RegisterId other,
                           const Firing& firing) {
    const bool identical = layouts_[written] == layouts_[other];
    const int64_t slots = layouts_[other].slots;
    for (auto it = live_.lower_bound({other, 0}); it != live_.end() && it->first == other; ++it) {
      const int64_t fill = it->second;
      if (identical && fill % slots != sequence % slots) continue;
      bool read_here = false;
      for (const SlotBinding& input : firing.inputs) {
        read_here |= input.register_id == other && input.sequence == fill;
      }
      const int consumers = static_cast<int>(outputs_[other]->consumers.size());
      if (identical && read_here && releases_[{other, fill}] == consumers - 1) {
        ++in_place_writes_;
        continue;
      }
      return fill;
    }
    return -1;
  }

  const std::vector<ActorDescription>* actors_;
  std::map<RegisterId, Layout> layouts_;
  int64_t in_place_writes_ = 0;
  std::map<RegisterId, std::set<RegisterId>> shares_;
  std::map<RegisterId, const OutputDescription*> outputs_;
  std::map<std::pair<RegisterId, int64_t>, int> releases_;
  std::set<std::pair<ActorId, int>> views_;        // (actor, input) read through a view.
  std::set<std::pair<RegisterId, int64_t>> live_;  // Fills written and not all released.
  int64_t shared_writes_ = 0;
  int64_t view_reads_ = 0;
  std::string first_violation_;
};

struct RunResult {
  int64_t shared_writes = 0;
  int64_t view_reads = 0;
  int64_t in_place_writes = 0;
  std::string first_violation;
};

// Runs `plan` once in a random order, watching the pairs `claimed` lists as sharing bytes.
RunResult RunRandomly(const proto::Plan& plan, const proto::Plan& claimed, uint64_t seed,
                      bool complete_immediately) {
  StatusOr<std::vector<ActorDescription>> described = actors::DescribeActors(plan);
  EXPECT_TRUE(described.ok()) << described.status();
  if (!described.ok()) return {};
  const std::vector<ActorDescription> actors = *described;
  SharedBytesModel model(claimed, &actors);
  ProtocolTestHost::Options options;
  options.order = ProtocolTestHost::Order::kRandom;
  options.seed = seed;
  options.complete_immediately = complete_immediately;
  options.record = false;
  options.on_launch = [&](ActorId id, const Firing& firing) { model.OnLaunch(id, firing); };
  options.on_complete = [&](ActorId id, int64_t index) { model.OnComplete(id, index); };
  options.on_send = [&](ActorId, const OutgoingMessage& message) { model.OnSend(message); };
  ProtocolTestHost host(actors, options);
  host.Start();
  const Status run = host.Run();
  EXPECT_TRUE(run.ok()) << run;
  EXPECT_TRUE(host.AllFinished());
  return {model.shared_writes(), model.view_reads(), model.in_place_writes(),
          model.first_violation()};
}

// `epilogues`: element-wise chains may fuse into the product that feeds them (docs/OPS.md
// "fused"); that removes the product's c, which the chain's first op used to write in place
// over, so some jobs then share nothing.
proto::Plan Compile(const std::string& path, int64_t steps, bool fusion = true,
                    bool epilogues = true, SbpSearchMethod sbp = SbpSearchMethod::kGlobal) {
  StatusOr<JobFile> job = ParseJobFile(path);
  CHECK(job.ok()) << job.status();
  StatusOr<std::string> text = ReadFile(path);
  CHECK(text.ok()) << text.status();
  CompileOptions options;
  options.cluster = ClusterNamedIn(*text);
  options.fuse_elementwise = fusion;
  options.fuse_epilogues = epilogues;
  options.sbp_search = sbp;
  StatusOr<proto::Plan> plan = CompileJob(*job, options);
  CHECK(plan.ok()) << path << ": " << plan.status();
  StatusOr<proto::Plan> resized = plan::WithSteps(*plan, steps);
  CHECK(resized.ok()) << resized.status();
  return *resized;
}

int OrderingInputs(const proto::Plan& plan) {
  int count = 0;
  for (const proto::ActorDef& actor : plan.actor()) count += plan::OrderingInputCount(actor);
  return count;
}

int SharedPairs(const proto::Plan& plan) {
  int pairs = 0;
  for (const proto::RegisterDef& reg : plan.register_def()) pairs += reg.shares_bytes_with_size();
  return pairs / 2;
}

class ReusedPlan : public ::testing::TestWithParam<std::string> {};

// The plan as compiled by default (product epilogues on), then without product epilogues, and
// that with the greedy sbp choice (the global search's tp plan of mlp_tiny_tp2 has no two
// registers that can share); those two together must share something (else the test proves
// nothing); counts are of all three.
TEST_P(ReusedPlan, NeverBeginsAFillInBytesAnotherRegisterStillHolds) {
  const proto::Plan without_epilogues =
      Compile(GetParam(), /*steps=*/4, /*fusion=*/true, /*epilogues=*/false);
  const proto::Plan greedy_without_epilogues = Compile(
      GetParam(), /*steps=*/4, /*fusion=*/true, /*epilogues=*/false, SbpSearchMethod::kGreedy);
  ASSERT_GT(SharedPairs(without_epilogues) + SharedPairs(greedy_without_epilogues), 0)
      << GetParam() << " shares nothing: the test proves nothing";
  // The default plans wait on ordering edges (order_weight_gradients), which the random orders
  // below respect; all but frozen_and_repeated's, whose one product that an op after its
  // sibling could overtake (backward.grad_b) already precedes that op through data (the op sums
  // w's two gradient terms).
  const proto::Plan compiled = Compile(GetParam(), /*steps=*/4);
  if (GetParam().find("frozen") == std::string::npos) {
    EXPECT_GT(OrderingInputs(compiled), 0) << GetParam() << " has no ordering edge";
  }
  constexpr int kRuns = 40;
  int64_t shared_writes = 0;
  int64_t view_reads = 0;
  int64_t in_place_writes = 0;
  for (const proto::Plan& plan : {compiled, without_epilogues, greedy_without_epilogues}) {
    for (int run = 0; run < kRuns; ++run) {
      SCOPED_TRACE(GetParam() + ", run " + std::to_string(run));
      const RunResult result = RunRandomly(plan, plan, static_cast<uint64_t>(run), run % 2 == 0);
      EXPECT_EQ(result.first_violation, "");
      shared_writes += result.shared_writes;
      view_reads += result.view_reads;
      in_place_writes += result.in_place_writes;
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(shared_writes, 0);
  // The jobs with reshapes (attention_tiny's and charlm's 3-d matmuls flatten for their weight
  // gradients; charlm splits and merges heads) read through views; mlp's have none.
  const bool has_reshapes =
      GetParam().find("mlp") == std::string::npos && GetParam().find("frozen") == std::string::npos;
  if (has_reshapes) {
    EXPECT_GT(view_reads, 0) << "no firing read through a view";
  }
  // charlm's bias adds write in place over their matmul's output (docs/PROTOCOL.md, "In-place
  // ops"); the model allowed each such write only to the input's last reader.
  if (GetParam().find("charlm") != std::string::npos) {
    EXPECT_GT(in_place_writes, 0) << "no firing wrote in place";
  }
}

// The memory budget's measures (compiler/memory_budget.h): the transformer with its gelu outputs
// recomputed in the backward pass (forced, `--recompute -1`: a recomputation waits on an
// ordering input, a gradient), and the MLP on two replicas at the fewest bytes the budget driver
// reaches, which shards its updates over dp.
TEST(ReusedPlan, PlansWithRecomputeOrShardedUpdatesNeverBeginAFillInBytesAnotherRegisterHolds) {
  for (const auto& [path, dp] : std::vector<std::pair<std::string, int>>{
           {"tests/compiler/jobs/transformer.pbtxt", 1}, {"tests/compiler/jobs/mlp.pbtxt", 2}}) {
    StatusOr<JobFile> job = ParseJobFile(path);
    ASSERT_TRUE(job.ok()) << job.status();
    CompileOptions options;
    options.cluster = *placement::ParseClusterShorthand(std::to_string(dp) + "cpu", 8);
    options.parallel.set_data_parallel(dp);
    if (dp == 1) {
      options.recompute = -1;
    } else {
      const int64_t least = LeastReachableBytes(*job, options);
      ASSERT_GT(least, 0) << path;
      options.cluster = WithMemoryBudget(options.cluster, least);
    }
    StatusOr<proto::Plan> compiled = CompileJob(*job, options);
    ASSERT_TRUE(compiled.ok()) << path << ": " << compiled.status();
    StatusOr<proto::Plan> plan = plan::WithSteps(*compiled, 3);
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_GT(SharedPairs(*plan), 0) << path;
    int64_t shared_writes = 0;
    for (int run = 0; run < 20; ++run) {
      SCOPED_TRACE(path + ", run " + std::to_string(run));
      const RunResult result = RunRandomly(*plan, *plan, static_cast<uint64_t>(run), run % 2 == 0);
      EXPECT_EQ(result.first_violation, "");
      shared_writes += result.shared_writes;
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_GT(shared_writes, 0) << path;
  }
}

// The control for in-place writes: claim that an element-wise op writes in place over an input
// another op also reads (laid out identically, listed both ways). Some random order has the
// element-wise op launch before the other reader released the fill, and the model catches it.
TEST(ReusedPlanModel, CatchesAnInPlaceWriteOverAnInputAnotherOpStillReads) {
  // Unfused: relu_grad is an actor of its own.
  const proto::Plan plan =
      Compile("tests/compiler/golden/mlp_tiny.pbtxt", /*steps=*/4, /*fusion=*/false);
  proto::Plan claimed = plan;
  int64_t input = -1;
  int64_t output = -1;
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.kernel().op_type() != "relu_grad" || input >= 0) continue;
    for (int64_t read : actor.input_register()) {
      // relu1.grad_x reads a1, which fc2 and fc2.grad_b read too.
      if (plan.register_def(static_cast<int>(read)).consumer_size() < 2 || input >= 0) continue;
      input = read;
      output = actor.output_register(0);
    }
  }
  ASSERT_GE(input, 0) << "mlp_tiny has no relu_grad with an input another op reads";
  proto::RegisterDef* x = claimed.mutable_register_def(static_cast<int>(input));
  proto::RegisterDef* y = claimed.mutable_register_def(static_cast<int>(output));
  y->set_offset(x->offset());
  y->set_slots(x->slots());
  y->set_bytes_per_slot(x->bytes_per_slot());
  x->add_shares_bytes_with(output);
  y->add_shares_bytes_with(input);
  std::string violation;
  for (uint64_t seed = 0; seed < 20 && violation.empty(); ++seed) {
    violation = RunRandomly(plan, claimed, seed, seed % 2 == 0).first_violation;
  }
  EXPECT_NE(violation.find("which shares its bytes, holds fill"), std::string::npos) << violation;
}

// The control: the model does catch a pair that can be live together. In mlp_tiny (unfused, so
// z1 has a register), claim that the batch 'x' shares bytes with 'z1', which fc1_bias writes
// while x is still held for fc1's weight gradient; the plan that runs keeps its own bytes, only
// the model watches the claim. (Not fc1's output 'h1': on one cpu device the source has one
// slot, and z1 is then written in place over h1, rightly.)
TEST(ReusedPlanModel, CatchesAClaimedPairThatIsLiveTogether) {
  const proto::Plan plan =
      Compile("tests/compiler/golden/mlp_tiny.pbtxt", /*steps=*/4, /*fusion=*/false);
  proto::Plan claimed = plan;
  int64_t x = -1;
  int64_t z1 = -1;
  for (const proto::RegisterDef& reg : plan.register_def()) {
    if (reg.name() == "x") x = reg.id();
    if (reg.name() == "z1") z1 = reg.id();
  }
  ASSERT_GE(x, 0);
  ASSERT_GE(z1, 0);
  claimed.mutable_register_def(static_cast<int>(x))->add_shares_bytes_with(z1);
  claimed.mutable_register_def(static_cast<int>(z1))->add_shares_bytes_with(x);
  const RunResult result = RunRandomly(plan, claimed, /*seed=*/1, false);
  EXPECT_NE(result.first_violation.find("begins fill 0 of 'z1' while register"), std::string::npos)
      << result.first_violation;
}

INSTANTIATE_TEST_SUITE_P(GoldenAndBenchJobs, ReusedPlan,
                         ::testing::Values("tests/compiler/golden/mlp_tiny_dp2.pbtxt",
                                           "tests/compiler/golden/mlp_tiny_tp2.pbtxt",
                                           "tests/compiler/golden/attention_tiny.pbtxt",
                                           "tests/compiler/golden/frozen_and_repeated.pbtxt",
                                           "bench/training/mlp.pbtxt", "demos/charlm/charlm.pbtxt"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(info.param.rfind('/') + 1);
                           name = name.substr(0, name.find('.'));
                           return name;
                         });

}  // namespace
}  // namespace compiler
}  // namespace softwire
