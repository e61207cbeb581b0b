#include "runtime/host/hosted_plan.h"

#include <algorithm>
#include <mutex>

#include "actors/stream_ordered_edges.h"
#include "plan/labels.h"
#include "plan/plan_partition.h"
#include "plan/steps.h"
#include "runtime/host/node_runtime.h"

namespace softwire {
namespace runtime {

// Hands sink reports to the current run's collector, with the pieces numbered from the run's
// start (the kernels number them on from the runs before it).
class HostedPlan::OutputRelay final : public OutputReporter {
 public:
  void Report(const std::string& output, int64_t piece, double value) override {
    if (target_ != nullptr) target_->Report(output, piece - pieces_before_, value);
  }
  // Before the run's actors start (their start message publishes it).
  void Set(OutputReporter* target, int64_t pieces_before) {
    target_ = target;
    pieces_before_ = pieces_before;
  }

 private:
  OutputReporter* target_ = nullptr;
  int64_t pieces_before_ = 0;
};

StatusOr<std::unique_ptr<HostedPlan>> HostedPlan::Load(NodeRuntime* runtime,
                                                       const proto::Plan& plan,
                                                       const std::string& node, actors::JobId job,
                                                       data::DataRoot data_root) {
  if (job == 0) job = runtime->NewJobId();
  std::unique_ptr<HostedPlan> hosted(
      new HostedPlan(runtime, plan, node, job, std::move(data_root)));
  SOFTWIRE_ASSIGN_OR_RETURN(hosted->descriptions_, actors::DescribeActors(plan));
  std::vector<int64_t> devices;
  if (node.empty()) {
    for (int64_t id = 0; id < plan.device_size(); ++id) devices.push_back(id);
    for (int64_t id = 0; id < plan.actor_size(); ++id) hosted->actors_.push_back(id);
  } else {
    SOFTWIRE_ASSIGN_OR_RETURN(plan::PlanPartition partition, plan::PartitionPlan(plan, node));
    devices = partition.devices;
    hosted->actors_ = partition.actors;
  }
  hosted->devices_.assign(static_cast<size_t>(plan.device_size()), nullptr);
  hosted->arenas_.resize(static_cast<size_t>(plan.device_size()));
  for (int64_t id : devices) {
    const proto::PlanDevice& plan_device = plan.device(static_cast<int>(id));
    const std::string name = plan::DeviceName(plan_device);
    Device* device = runtime->FindDevice(name);
    if (device == nullptr) {
      return InvalidArgumentError("device '" + name + "' of plan '" + plan.job_name() +
                                  "' is not hosted by this runtime");
    }
    SOFTWIRE_RETURN_IF_ERROR(runtime->Claim(name, job));
    hosted->devices_[static_cast<size_t>(id)] = device;
    SOFTWIRE_ASSIGN_OR_RETURN(hosted->arenas_[static_cast<size_t>(id)],
                              device->AllocateArena(plan_device.planned_bytes()));
  }
  SOFTWIRE_ASSIGN_OR_RETURN(hosted->slots_, LocateRegisterSlots(plan, hosted->arenas_));
  return hosted;
}

Status HostedPlan::MarkStreamOrderedEdges(const std::function<bool(int64_t)>& completion_hook) {
  // A key per in-order queue: device index times the most queues a device has, plus the index.
  int64_t queues_per_device = 1;
  for (int64_t id : actors_) {
    queues_per_device =
        std::max<int64_t>(queues_per_device, plan_.actor(static_cast<int>(id)).queue() + 1);
  }
  std::vector<int64_t> queue_of(descriptions_.size(), -1);
  for (int64_t id : actors_) {
    const proto::ActorDef& actor = plan_.actor(static_cast<int>(id));
    Device* device = devices_[static_cast<size_t>(actor.device())];
    if (device == nullptr || completion_hook(id)) continue;
    StatusOr<DeviceQueue*> queue = device->queue(actor.queue());
    if (!queue.ok() || !(*queue)->runs_in_launch_order()) continue;
    queue_of[static_cast<size_t>(id)] = actor.device() * queues_per_device + actor.queue();
  }
  return actors::MarkStreamOrderedEdges(&descriptions_, queue_of);
}

HostedPlan::HostedPlan(NodeRuntime* runtime, const proto::Plan& plan, std::string node,
                       actors::JobId job, data::DataRoot data_root)
    : runtime_(runtime),
      plan_(plan),
      node_(std::move(node)),
      job_(job),
      data_root_(std::move(data_root)),
      directory_(plan.actor_size()),
      outputs_(std::make_unique<OutputRelay>()) {}

HostedPlan::~HostedPlan() {
  bindings_.clear();  // Kernels first: they may hold memory of the arenas.
  runtime_->Release(job_);
}

Status HostedPlan::Bind(const std::vector<const HostedPlan*>& peers) {
  CHECK(!bound_) << "HostedPlan::Bind called twice";
  bound_ = true;
  for (const HostedPlan* peer : peers) {
    for (size_t id = 0; id < slots_.size(); ++id) {
      if (slots_[id].empty()) slots_[id] = peer->register_slots()[id];
    }
  }
  in_process_transport_ = std::make_unique<InProcessWireTransport>(&slots_);
  wire_transport_.store(in_process_transport_.get());
  LaunchWiring wiring;
  wiring.listener = &directory_;
  wiring.stopping = &stopping_;
  wiring.job = job_;
  wiring.wire_transport = &wire_transport_;
  SOFTWIRE_ASSIGN_OR_RETURN(bindings_, BindActors(plan_, descriptions_, devices_, arenas_, slots_,
                                                  actors_, wiring, outputs_.get(), data_root_));
  return Status::Ok();
}

StatusOr<std::vector<int64_t>> HostedPlan::ActorsOf(const std::string& node) const {
  SOFTWIRE_ASSIGN_OR_RETURN(plan::PlanPartition partition, plan::PartitionPlan(plan_, node));
  return partition.actors;
}

void HostedPlan::SetWireTransport(WireTransport* transport) {
  wire_transport_.store(transport != nullptr ? transport : in_process_transport_.get(),
                        std::memory_order_release);
}

void HostedPlan::SetOutputTarget(OutputReporter* target) {
  outputs_->Set(target, pieces_before_);
}

Status HostedPlan::ContinueFrom(int64_t steps) {
  if (runs_ > 0) {
    return FailedPreconditionError("plan '" + plan_.job_name() +
                                   "' has run already; it continues from where its runs ended");
  }
  if (steps < 0) return InvalidArgumentError("cannot continue from a negative step count");
  pieces_before_ = steps * std::max<int64_t>(1, plan_.schedule().pieces_per_step());
  return Status::Ok();
}

int64_t HostedPlan::steps_before() const {
  return pieces_before_ / std::max<int64_t>(1, plan_.schedule().pieces_per_step());
}

void HostedPlan::RunEnded(bool completed) {
  outputs_->Set(nullptr, pieces_before_);
  ++runs_;
  if (!completed) {
    broken_ = true;
    return;
  }
  pieces_before_ += plan::TotalPieces(plan_);
}

}  // namespace runtime
}  // namespace softwire
