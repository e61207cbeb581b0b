#include "plan/register_lifetimes.h"

#include <algorithm>
#include <string>
#include <vector>

#include "plan/actor_kind_rules.h"
#include "plan/fill_arithmetic.h"
#include "plan/ordering_inputs.h"
#include "proto/fused_program.h"

namespace softwire {
namespace plan {
namespace {

// Two steps: enough to see every order across a step boundary (see the header).
constexpr int64_t kWindowSteps = 2;

bool WritesWholeFills(proto::ActorKind kind) {
  switch (kind) {
    case proto::ACTOR_KIND_SOURCE:
    case proto::ACTOR_KIND_COMPUTE:
    case proto::ACTOR_KIND_ACCUMULATE:
    case proto::ACTOR_KIND_COPY:
    case proto::ACTOR_KIND_BOXING:
      return true;
    default:  // Variables keep their value; recv writes from the data plane.
      return false;
  }
}

// A fused kernel's program allows output `output` over input `input` (FusedMayWriteOver); a
// program that does not parse allows nothing (the kernel refuses it anyway).
bool FusedKernelMayWriteOver(const proto::KernelDef& kernel, int input, int output) {
  for (const proto::Attribute& attribute : kernel.attr()) {
    if (attribute.name() != "program") continue;
    StatusOr<FusedProgram> program = ParseFusedProgram(attribute.string());
    const bool float32_output = std::any_of(
        kernel.output().begin(), kernel.output().end(),
        [](const proto::TensorDesc& desc) { return desc.dtype() == proto::DATA_TYPE_FLOAT32; });
    return program.ok() && FusedMayWriteOver(*program, input, output, float32_output);
  }
  return false;
}

}  // namespace

bool MayShareBytes(const proto::Plan& plan, int64_t register_id) {
  const proto::RegisterDef& reg = plan.register_def(static_cast<int>(register_id));
  if (!WritesWholeFills(plan.actor(static_cast<int>(reg.producer())).kind())) return false;
  for (const proto::RegisterConsumer& consumer : reg.consumer()) {
    if (consumer.phase() != 0) return false;
    if (plan.actor(static_cast<int>(consumer.actor())).kind() == proto::ACTOR_KIND_SEND) {
      return false;
    }
  }
  return true;
}

bool KernelMayWriteOver(const proto::Plan& plan, const proto::ActorDef& writer, int64_t input,
                        int64_t output) {
  if (writer.kind() != proto::ACTOR_KIND_COMPUTE) return false;
  const proto::KernelDef& kernel = writer.kernel();
  // The kernel reads its first KernelInputCount inputs; an ordering input it never reads.
  const int kernel_inputs = KernelInputCount(writer);
  if (kernel.input_size() != kernel_inputs ||
      kernel.output_size() != writer.output_register_size()) {
    return false;
  }
  int index = -1;
  for (int k = 0; k < kernel_inputs; ++k) {
    if (writer.input_register(k) == input) index = k;
  }
  int written_index = -1;
  for (int k = 0; k < writer.output_register_size(); ++k) {
    if (writer.output_register(k) == output) written_index = k;
  }
  if (index < 0 || written_index < 0) return false;
  const std::string& op = kernel.op_type();
  // A fused kernel stores a block's outputs after every statement read its inputs, element i
  // only in the block of i, so any output may lie over an input it reads whole: that is one of
  // the output's shape. With a product, not over the product's operands, nor the product's
  // value (FusedMayWriteOver).
  if (op == "fused" && !FusedKernelMayWriteOver(kernel, index, written_index)) return false;
  const bool element_local =
      op == "fused" || (writer.output_register_size() == 1 &&
                        (op == "relu" || op == "gelu" || op == "relu_grad" || op == "gelu_grad" ||
                         op == "scale" || op == "add" || (op == "bias_add" && index == 0)));
  if (!element_local) return false;
  const proto::TensorDesc& read = kernel.input(index);
  const proto::TensorDesc& written = kernel.output(written_index);
  const proto::TensorDesc& held = plan.register_def(static_cast<int>(input)).tensor();
  auto same = [](const proto::TensorDesc& a, const proto::TensorDesc& b) {
    return a.dtype() == b.dtype() && a.layout() == b.layout() &&
           std::equal(a.dims().begin(), a.dims().end(), b.dims().begin(), b.dims().end());
  };
  const proto::RegisterDef& out = plan.register_def(static_cast<int>(output));
  return same(read, written) && same(read, held) && same(written, out.tensor());
}

bool KernelMayWriteOver(const proto::Plan& plan, const proto::ActorDef& writer, int64_t input) {
  return writer.output_register_size() == 1 &&
         KernelMayWriteOver(plan, writer, input, writer.output_register(0));
}

int64_t RegisterBytesWithoutSharing(const proto::Plan& plan, int device) {
  int64_t bytes = 0;
  for (const proto::RegisterDef& reg : plan.register_def()) {
    if (reg.device() == device) bytes += reg.slots() * reg.bytes_per_slot();
  }
  return bytes;
}

RegisterLifetimes::RegisterLifetimes(const proto::Plan& plan) : plan_(plan) {
  const int64_t pieces_per_step = plan.schedule().pieces_per_step();
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.period() < 1 || pieces_per_step % actor.period() != 0) {
      why_ = "actor '" + actor.name() + "' has a period that does not divide pieces_per_step";
      return;
    }
  }
  for (const proto::RegisterDef& reg : plan.register_def()) {
    if (reg.period() < 1 || pieces_per_step % reg.period() != 0) {
      why_ = "register '" + reg.name() + "' has a period that does not divide pieces_per_step";
      return;
    }
  }
  pieces_ = kWindowSteps * pieces_per_step;
  BuildNodes();
  // The size bound first: a large plan gives up before its edges and lives are built, which
  // on 10,000 ops over 256 devices took seconds only to learn that nothing may share.
  const int64_t columns = CountBeginningFirings();
  if (columns > 0 && nodes_ > kMaxReachabilityBits / columns) {
    why_ = TooLarge(nodes_, columns);
    return;
  }
  BuildEdges();
  if (!SortTopologically()) {
    why_ = "the firing graph has a cycle: the plan deadlocks";
    return;
  }
  BuildLives();
  BuildReachability();
  analyzed_ = why_.empty();
}

void RegisterLifetimes::BuildNodes() {
  first_firing_.reserve(plan_.actor_size());
  Firing nodes = 0;
  for (const proto::ActorDef& actor : plan_.actor()) {
    first_firing_.push_back(nodes);
    nodes += pieces_ / actor.period();
  }
  nodes_ = nodes;
}

int64_t RegisterLifetimes::CountBeginningFirings() const {
  std::vector<bool> counted(static_cast<size_t>(nodes_), false);
  int64_t columns = 0;
  for (const proto::RegisterDef& reg : plan_.register_def()) {
    if (!MayShareBytes(plan_, reg.id())) continue;
    const int64_t q = reg.period();
    const int64_t producer_period = plan_.actor(static_cast<int>(reg.producer())).period();
    for (int64_t fill = 0; fill < FillCount(pieces_, q); ++fill) {
      const Firing begins =
          first_firing_[reg.producer()] + FirstReadingFiring(fill, producer_period, q);
      if (!counted[static_cast<size_t>(begins)]) {
        counted[static_cast<size_t>(begins)] = true;
        ++columns;
      }
    }
  }
  return columns;
}

std::string RegisterLifetimes::TooLarge(int64_t nodes, int64_t columns) {
  return "the plan is too large to analyze (" + std::to_string(nodes) + " firings x " +
         std::to_string(columns) + " beginning firings in two steps)";
}

void RegisterLifetimes::BuildEdges() {
  successors_.resize(static_cast<size_t>(nodes_));
  auto node = [&](int64_t actor, int64_t firing) { return first_firing_[actor] + firing; };
  auto period = [&](int64_t actor) { return plan_.actor(static_cast<int>(actor)).period(); };
  // An actor's firing i launches once firing i - max_in_flight completed (i - 1: one at a
  // time). Its firings in flight together are not ordered with each other here.
  for (const proto::ActorDef& actor : plan_.actor()) {
    const int64_t in_flight = MaxInFlight(actor);
    for (int64_t i = in_flight; i < pieces_ / actor.period(); ++i) {
      successors_[node(actor.id(), i - in_flight)].push_back(node(actor.id(), i));
    }
  }
  for (const proto::RegisterDef& reg : plan_.register_def()) {
    const int64_t q = reg.period();
    const int64_t producer_period = period(reg.producer());
    for (int64_t fill = 0; fill < FillCount(pieces_, q); ++fill) {
      const Firing completes = node(reg.producer(), CompletingFiring(fill, producer_period, q));
      std::vector<Firing> phase0_releases;
      for (const proto::RegisterConsumer& consumer : reg.consumer()) {
        if (consumer.phase() != 0) continue;
        const int64_t p = period(consumer.actor());
        successors_[completes].push_back(node(consumer.actor(), FirstReadingFiring(fill, p, q)));
        phase0_releases.push_back(node(consumer.actor(), ReleasingFiring(fill, p, q)));
      }
      for (const proto::RegisterConsumer& consumer : reg.consumer()) {
        if (consumer.phase() == 0) continue;
        const Firing reads =
            node(consumer.actor(), FirstReadingFiring(fill, period(consumer.actor()), q));
        successors_[completes].push_back(reads);
        for (Firing release : phase0_releases) successors_[release].push_back(reads);
      }
      const int64_t previous = PreviousFillInSlot(fill, reg.slots());
      if (previous < 0) continue;
      const Firing begins = node(reg.producer(), FirstReadingFiring(fill, producer_period, q));
      for (const proto::RegisterConsumer& consumer : reg.consumer()) {
        const int64_t p = period(consumer.actor());
        successors_[node(consumer.actor(), ReleasingFiring(previous, p, q))].push_back(begins);
      }
    }
  }
}

bool RegisterLifetimes::SortTopologically() {
  const size_t nodes = successors_.size();
  std::vector<int64_t> predecessors(nodes, 0);
  for (const std::vector<Firing>& next : successors_) {
    for (Firing v : next) ++predecessors[v];
  }
  topological_order_.reserve(nodes);
  for (size_t v = 0; v < nodes; ++v) {
    if (predecessors[v] == 0) topological_order_.push_back(static_cast<Firing>(v));
  }
  for (size_t i = 0; i < topological_order_.size(); ++i) {
    for (Firing v : successors_[topological_order_[i]]) {
      if (--predecessors[v] == 0) topological_order_.push_back(v);
    }
  }
  if (topological_order_.size() != nodes) return false;
  rank_.assign(nodes, 0);
  for (size_t i = 0; i < nodes; ++i) rank_[topological_order_[i]] = static_cast<int64_t>(i);
  return true;
}

void RegisterLifetimes::BuildLives() {
  auto node = [&](int64_t actor, int64_t firing) { return first_firing_[actor] + firing; };
  auto period = [&](int64_t actor) { return plan_.actor(static_cast<int>(actor)).period(); };
  lives_.resize(plan_.register_def_size());
  may_share_.resize(plan_.register_def_size());
  column_of_.assign(successors_.size(), -1);
  for (const proto::RegisterDef& reg : plan_.register_def()) {
    may_share_[reg.id()] = MayShareBytes(plan_, reg.id());
    const int64_t q = reg.period();
    const int64_t producer_period = period(reg.producer());
    Lives& lives = lives_[reg.id()];
    for (int64_t fill = 0; fill < FillCount(pieces_, q); ++fill) {
      const Firing begins = node(reg.producer(), FirstReadingFiring(fill, producer_period, q));
      lives.begins.push_back(begins);
      std::vector<Firing> ends = {node(reg.producer(), CompletingFiring(fill, producer_period, q))};
      for (const proto::RegisterConsumer& consumer : reg.consumer()) {
        ends.push_back(node(consumer.actor(), ReleasingFiring(fill, period(consumer.actor()), q)));
      }
      lives.ends.push_back(std::move(ends));
      if (may_share_[reg.id()] && column_of_[begins] < 0) column_of_[begins] = columns_++;
    }
  }
}

void RegisterLifetimes::BuildReachability() {
  const int64_t nodes = static_cast<int64_t>(successors_.size());
  if (columns_ > 0 && nodes > kMaxReachabilityBits / columns_) {
    why_ = TooLarge(nodes, columns_);
    return;
  }
  const int64_t words = (columns_ + 63) / 64;
  reachable_.assign(static_cast<size_t>(nodes * words), 0);
  if (words == 0) return;  // no register may share bytes: nothing to ask Precedes about
  for (auto u = topological_order_.rbegin(); u != topological_order_.rend(); ++u) {
    uint64_t* row = &reachable_[*u * words];
    for (Firing v : successors_[*u]) {
      const uint64_t* next = &reachable_[v * words];
      for (int64_t w = 0; w < words; ++w) row[w] |= next[w];
      if (column_of_[v] >= 0) row[column_of_[v] / 64] |= uint64_t{1} << (column_of_[v] % 64);
    }
  }
}

bool RegisterLifetimes::Precedes(const std::vector<Firing>& ends, Firing begin) const {
  const int64_t column = column_of_[begin];
  if (column < 0) return false;
  const int64_t words = (columns_ + 63) / 64;
  for (Firing end : ends) {
    if ((reachable_[end * words + column / 64] & (uint64_t{1} << (column % 64))) == 0) {
      return false;
    }
  }
  return true;
}

bool RegisterLifetimes::NeverLiveTogether(int64_t a, int64_t b) const {
  if (!analyzed_ || a == b || !may_share_[a] || !may_share_[b]) return false;
  const Lives& first = lives_[a];
  const Lives& second = lives_[b];
  for (size_t f = 0; f < first.begins.size(); ++f) {
    for (size_t g = 0; g < second.begins.size(); ++g) {
      if (!Precedes(first.ends[f], second.begins[g]) &&
          !Precedes(second.ends[g], first.begins[f])) {
        return false;
      }
    }
  }
  return true;
}

bool RegisterLifetimes::WritesInPlace(int64_t input, int64_t output) const {
  if (!analyzed_ || input == output || !may_share_[input] || !may_share_[output]) return false;
  const proto::RegisterDef& x = plan_.register_def(static_cast<int>(input));
  const proto::RegisterDef& y = plan_.register_def(static_cast<int>(output));
  const proto::ActorDef& writer = plan_.actor(static_cast<int>(y.producer()));
  if (x.slots() != y.slots() || x.period() != y.period() || writer.period() != y.period() ||
      std::find(writer.input_register().begin(), writer.input_register().end(), input) ==
          writer.input_register().end()) {
    return false;
  }
  const Lives& read = lives_[input];
  const Lives& written = lives_[output];
  const size_t slots = static_cast<size_t>(x.slots());
  for (size_t f = 0; f < read.begins.size(); ++f) {
    for (size_t g = f % slots; g < written.begins.size(); g += slots) {
      if (f != g) {
        if (!Precedes(read.ends[f], written.begins[g]) &&
            !Precedes(written.ends[g], read.begins[f])) {
          return false;
        }
        continue;
      }
      // The writer's firing g reads fill f and begins fill g: every other end of f before it.
      std::vector<Firing> others;
      for (Firing end : read.ends[f]) {
        if (end != written.begins[g]) others.push_back(end);
      }
      if (!Precedes(others, written.begins[g])) return false;
    }
  }
  return true;
}

int64_t RegisterLifetimes::FirstWriteRank(int64_t register_id) const {
  if (!analyzed_) return 0;
  return rank_[lives_[register_id].begins.front()];
}

}  // namespace plan
}  // namespace softwire
