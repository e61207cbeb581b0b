// BoxingBuilder: turns a BoxingEdge (a placement::BoxingPlan) into copy and boxing tasks of the
// TaskGraph (docs/PARALLELISM.md, "Boxing"; ops of docs/OPS.md, "Transfer and boxing ops").
//
// Copies are COPY tasks on the destination device's copy queue (queue 1), running `copy`, or
// `slice` when they move only a block of their input (a slice-copy). Splits, adds, concats,
// assembles and zero fills are BOXING tasks on the device's compute queue. Every task has the
// value's period (per-step values box once per step) and the consuming op's stage.
//
// A reduce-scatter (P -> S) is direct: each device slices its part out of every device's
// partial value (slice-copies) and adds them in one assemble.
//
// A ring all-reduce over n devices cuts each member's value into n*c flat chunks (c sub-chunks
// per ring position, so transfers of one pipeline with adds of the previous); chunk q is
// reduced along the ring by n-1 (copy, add) steps ending on member q/c, then passed on by n-1
// copies, and every member concatenates its chunks: 2(n-1) ring steps per chunk, each its own
// actor with its own registers.
//
// Names: "<tensor>.<method>[.<axis>]...@<device>", e.g.
// "w1.grad_accumulated.all_reduce.c0.s1.add@1"; a gradient bucket's are
// "gradient_bucket<k>.<step>@<device>", its reshapes
// "<tensor>.flat@<device>" and "<tensor>.reduced@<device>".
//
// Borrows the task graph and the compilation; not thread-safe.
#ifndef SOFTWIRE_COMPILER_PHYSICAL_BOXING_BUILDER_H_
#define SOFTWIRE_COMPILER_PHYSICAL_BOXING_BUILDER_H_

#include <string>
#include <vector>

#include "compiler/compilation.h"
#include "compiler/ir/task_graph.h"

namespace softwire {
namespace compiler {

// Sub-chunks per ring position of an all-reduce whose chunks (the group's whole value over the
// ring size) have `chunk_bytes`: one per MiB, from one up to four, so steps pipeline without
// messages small enough for latency to dominate.
int RingSubChunks(int64_t chunk_bytes);

class BoxingBuilder {
 public:
  BoxingBuilder(const Compilation& compilation, TaskGraph& tasks)
      : compilation_(compilation), tasks_(tasks) {}

  // Builds `edge`'s tasks reading `from` (the register of each position of the edge's source
  // mesh) and returns the register of each position of its destination mesh. `name` prefixes
  // every task ("h1", or "h1.to2" for a tensor's second edge).
  std::vector<RegisterId> Build(const BoxingEdge& edge, const std::vector<RegisterId>& from,
                                const std::string& name);

  // Builds a gradient bucket: on every device each edge's value is flattened (a reshape, unless
  // already 1-D) and packed (flat_concat), the packs are ring all-reduced over the bucket's mesh
  // axis, unpacked (flat_split) and reshaped back. `from[i]` are the source registers of the
  // bucket's edge i; returns each edge's destination registers.
  std::vector<std::vector<RegisterId>> BuildBucket(
      const GradientBucket& bucket, const std::vector<const std::vector<RegisterId>*>& from,
      const std::string& name);

 private:
  struct Group;
  struct BucketLayout;

  // What every task built for one boxing edge, or for one gradient bucket, shares. Passed to
  // each helper rather than kept in members, so no helper reads another edge's values.
  struct EdgeContext {
    const BoxingEdge* edge = nullptr;  // Its meshes, tensor and plan; its stage for every task.
    std::string name;                  // Prefix of every task's label.
    int64_t period = 1;                // The value's period: its tasks fire once per period.
    TensorId register_tensor = -1;     // The logical tensor new registers hold a form of.

    EdgeContext WithRegisterTensor(TensorId tensor) const;
  };

  EdgeContext ContextOf(const BoxingEdge& edge, const std::string& name) const;

  // A task named "<label>@<device>" reading `inputs`, with outputs of these types (registers
  // named like it, or "<label>.<k>@<device>" for several); returns its output registers.
  std::vector<RegisterId> AddTask(const EdgeContext& context, const std::string& label,
                                  proto::ActorKind kind, int device, const std::string& op_type,
                                  AttributeMap attributes, const std::vector<RegisterId>& inputs,
                                  const std::vector<TensorType>& outputs);
  RegisterId Copy(const EdgeContext& context, const std::string& name, RegisterId input,
                  int device);
  RegisterId Slice(const EdgeContext& context, const std::string& name, RegisterId input,
                   int device, const std::vector<int64_t>& begin, const std::vector<int64_t>& end);
  RegisterId Add(const EdgeContext& context, const std::string& name, RegisterId a, RegisterId b);
  RegisterId Assemble(const EdgeContext& context, const std::string& name, int device,
                      const std::vector<RegisterId>& inputs, const std::vector<int64_t>& shape,
                      const std::vector<int64_t>& offsets);
  RegisterId Fill(const EdgeContext& context, const std::string& name, int device,
                  const TensorType& type);
  RegisterId Reshape(const EdgeContext& context, const std::string& name, RegisterId input,
                     const std::vector<int64_t>& dims);

  std::vector<RegisterId> Step(const EdgeContext& context, const placement::BoxingStep& step,
                               const std::vector<RegisterId>& from);
  void AllGather(const EdgeContext& context, Group& group, int axis);
  void AllReduce(const EdgeContext& context, Group& group);
  void ReduceScatter(const EdgeContext& context, Group& group, int axis);
  void AllToAll(const EdgeContext& context, Group& group, int from_axis, int to_axis);
  void ZeroFill(const EdgeContext& context, Group& group);
  void PadToPartial(const EdgeContext& context, Group& group, int axis);
  std::vector<RegisterId> General(const EdgeContext& context, const std::vector<RegisterId>& from);

  // The steps of a gradient bucket (BuildBucket): each edge's own steps before the all-reduce
  // (returns the index of each edge's first step after it), the packed ring of one group of
  // the bucket's mesh axis, and each edge's own steps after the all-reduce.
  std::vector<size_t> StepsBeforeReduce(const GradientBucket& bucket,
                                        std::vector<std::vector<RegisterId>>& values);
  void ReduceBucketGroup(const EdgeContext& context, const GradientBucket& bucket,
                         const std::vector<int>& linear,
                         const std::vector<std::vector<RegisterId>>& before,
                         std::vector<std::vector<RegisterId>>& result);
  BucketLayout LayoutOf(const std::vector<std::vector<RegisterId>>& before, int member) const;
  RegisterId Pack(const EdgeContext& context, const GradientBucket& bucket,
                  const BucketLayout& layout, const std::vector<std::vector<RegisterId>>& before,
                  int member, int device);
  void Unpack(const EdgeContext& context, const GradientBucket& bucket, const BucketLayout& layout,
              RegisterId reduced, int member, int device,
              const std::vector<std::vector<RegisterId>>& before,
              std::vector<std::vector<RegisterId>>& result);
  void StepsAfterReduce(const GradientBucket& bucket, const std::vector<size_t>& after_reduce,
                        std::vector<std::vector<RegisterId>>& result);

  std::string At(const std::string& name, int device) const;

  const Compilation& compilation_;
  TaskGraph& tasks_;
};

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_PHYSICAL_BOXING_BUILDER_H_
