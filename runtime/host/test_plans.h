// Hand-built plans and small kernels for the runtime's tests and benchmarks.
//
//   TestPlan plan(/*steps=*/4, /*pieces_per_step=*/2);
//   plan.Register("x", /*slots=*/2).Register("y", 2).Register("loss", 2);
//   plan.Actor(TestActorSpec("source", proto::ACTOR_KIND_SOURCE, "piece_source", {}, {"x"}));
//   plan.Actor(TestActorSpec("double", proto::ACTOR_KIND_COMPUTE, "double", {"x"}, {"y"}));
//   ...
//   proto::Plan built = plan.Build();
//
// Build() fills ids, producers, consumers, firings, each actor kind's settings and one device
// (cpu unless DeviceKind says otherwise) per distinct `device` index, with every register laid
// out back to back in its producer's device arena. CHECK-fails on misuse.
#ifndef SOFTWIRE_RUNTIME_HOST_TEST_PLANS_H_
#define SOFTWIRE_RUNTIME_HOST_TEST_PLANS_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "proto/plan.pb.h"
#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {
namespace testing {

struct TestActorSpec {
  TestActorSpec(std::string name, proto::ActorKind kind, std::string op_type,
                std::vector<std::string> inputs, std::vector<std::string> outputs)
      : name(std::move(name)),
        kind(kind),
        op_type(std::move(op_type)),
        inputs(std::move(inputs)),
        outputs(std::move(outputs)) {}
  TestActorSpec& OnDevice(int index) {
    device = index;
    return *this;
  }
  TestActorSpec& Attr(const std::string& attr, int64_t value) {
    int_attrs.emplace_back(attr, value);
    return *this;
  }
  TestActorSpec& Reports(const std::string& output) {
    sink_output = output;
    return *this;
  }
  // ActorDef.queue (copies: 1) and ActorDef.estimated_seconds (what sim devices take).
  TestActorSpec& OnQueue(int index) {
    queue = index;
    return *this;
  }
  TestActorSpec& Takes(double seconds) {
    estimated_seconds = seconds;
    return *this;
  }

  std::string name;
  proto::ActorKind kind = proto::ACTOR_KIND_COMPUTE;
  std::string op_type;
  std::vector<std::string> inputs;   // Register names, kernel order.
  std::vector<std::string> outputs;  // Register names, kernel order.
  int device = 0;
  int queue = 0;
  double estimated_seconds = 0;
  std::vector<std::pair<std::string, int64_t>> int_attrs;
  std::string sink_output;  // SINK: the PlanOutput it reports; default: its actor name.
};

class TestPlan {
 public:
  TestPlan(int64_t steps, int64_t pieces_per_step);

  // A float32 register of `dims` (scalar when empty); its period is its producer's.
  TestPlan& Register(const std::string& name, int slots, std::vector<int64_t> dims = {});
  TestPlan& Actor(const TestActorSpec& spec);
  // A PlanOutput observed by sink actor `sink` (its sink_output names the output).
  TestPlan& Output(const std::string& sink, bool is_loss);
  // A PlanVariable of `dims` whose parts live in the given registers (each written by a
  // VARIABLE actor): {register, split_axis, begin, end}.
  struct Part {
    std::string register_name;
    int split_axis = -1;
    int64_t begin = 0;
    int64_t end = 0;
  };
  TestPlan& Variable(const std::string& name, std::vector<int64_t> dims, std::vector<Part> parts);
  // Kernel threads of every device.
  TestPlan& Cores(int cores);
  // Extra planned bytes per device beyond the registers (an arena of an odd size).
  TestPlan& ExtraBytes(int64_t bytes);
  // The kind of every device (default cpu; "sim:<i>" devices for DEVICE_KIND_SIM).
  TestPlan& DeviceKind(proto::DeviceKind kind);

  proto::Plan Build() const;

 private:
  int64_t steps_;
  int64_t pieces_per_step_;
  int cores_ = 1;
  int64_t extra_bytes_ = 0;
  proto::DeviceKind device_kind_ = proto::DEVICE_KIND_CPU;
  std::vector<std::pair<std::string, int>> registers_;  // Name, slots.
  std::vector<std::vector<int64_t>> register_dims_;
  std::vector<TestActorSpec> actors_;
  std::vector<std::pair<std::string, bool>> outputs_;
  struct VariableSpec {
    std::string name;
    std::vector<int64_t> dims;
    std::vector<Part> parts;
  };
  std::vector<VariableSpec> variables_;
};

// What the test kernels saw, in the order they saw it. Thread-safe.
class KernelLog {
 public:
  struct Run {
    std::string actor;
    int64_t firing = 0;
    int64_t first_piece = 0;
    std::chrono::steady_clock::time_point start;
    std::chrono::steady_clock::time_point end;
  };
  void Add(Run run);
  std::vector<Run> Runs(const std::string& actor) const;
  void Clear();

 private:
  mutable std::mutex mutex_;
  std::vector<Run> runs_;
};

// The test kernels (float32):
//   piece_source: every output element = the firing's first piece.
//   double:       output = 2 * input.
//   report:       (sink) reports input[0] for its piece; logs the piece.
//   sleep:        sleeps int attr "micros", logs its interval, copies input 0 (or writes the
//                 piece) to every output.
//   fail_at:      like double, but fails at firing int attr "firing".
//   part_fill:    (variable) writes, at firing 0, element i of its part as
//                 int attr "first" + i; later firings write nothing.
//   noop:         does nothing.
// Every kernel logs each run into `log` (borrowed, may be null).
void RegisterTestKernels(KernelRegistry* registry, KernelLog* log);

// What insert_send_recv does to a two-device plan of a send and its recv: device 1 becomes
// `node`, and register `wire` (the send's output) moves onto it, after its registers.
void PlaceWireOnReceiver(proto::Plan* plan, int wire, const std::string& node);

}  // namespace testing
}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_TEST_PLANS_H_
