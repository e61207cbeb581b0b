#include "compiler/replica_symmetry.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace softwire {
namespace compiler {
namespace {

// Reader lists up to this long are also tried rotated (PairReaders).
constexpr size_t kMaxRotatedReaders = 64;

std::string TaskName(const TaskGraph& tasks, TaskId id) {
  return "'" + tasks.task(id).name + "'";
}
std::string RegisterName(const TaskGraph& tasks, RegisterId id) {
  return "'" + tasks.register_at(id).name + "'";
}

// Builds the proposal of FindReplicaSymmetry: the tail, then seeds from the logical ops, then
// the core's edges. Lenient: a pair that does not fit (already taken, another period) is left
// out, never an error; NormalizeChains and VerifySymmetry make the result valid.
class SymmetryProposal {
 public:
  SymmetryProposal(const TaskGraph& tasks, const std::vector<int>& device_image)
      : tasks_(tasks), device_image_(device_image) {
    symmetry_.task_image.assign(tasks.tasks().size(), -1);
    symmetry_.register_image.assign(tasks.registers().size(), -1);
    symmetry_.tail.assign(tasks.tasks().size(), 0);
    task_preimage_.assign(tasks.tasks().size(), -1);
    register_preimage_.assign(tasks.registers().size(), -1);
  }

  // False with `*why_not` set when a task has no device of the renaming.
  bool Build(std::string* why_not) {
    if (!SortLogicalTasks(why_not)) return false;
    FindTail();
    Seed();
    while (true) {
      Follow();
      if (!MapUnmappedInputs()) break;
    }
    return true;
  }

  TaskGraphSymmetry Take() { return std::move(symmetry_); }

 private:
  bool InTail(TaskId task) const { return symmetry_.tail[task] != 0; }

  // The logical ops' tasks sorted by (op, device, id), and per op whether the renaming keeps its
  // devices with as many tasks on each.
  bool SortLogicalTasks(std::string* why_not) {
    std::unordered_map<std::string, int32_t> op_types;
    device_.reserve(tasks_.tasks().size());
    class_.reserve(tasks_.tasks().size());
    for (const TaskDef& task : tasks_.tasks()) {
      if (task.device < 0 || task.device >= static_cast<int>(device_image_.size())) {
        *why_not = "task " + TaskName(tasks_, task.id) + " has no device of the renaming";
        return false;
      }
      device_.push_back(task.device);
      const int32_t op_type =
          op_types.emplace(task.op_type, static_cast<int32_t>(op_types.size())).first->second;
      class_.push_back(op_type * 64 + static_cast<int32_t>(task.kind));
      if (task.logical_op < 0) continue;
      logical_.emplace_back(task.logical_op, task.device, task.id);
      if (task.logical_op >= static_cast<OpId>(kept_op_.size())) {
        kept_op_.resize(task.logical_op + 1, 1);
      }
    }
    // Sorted by (op, device, id): two stable counting sorts of the tasks in id order.
    logical_ =
        StableByKey(StableByKey(std::move(logical_), 1, device_image_.size()), 0, kept_op_.size());
    std::vector<size_t> count_on_device(device_image_.size(), 0);
    for (size_t begin = 0; begin < logical_.size();) {
      const OpId op = std::get<0>(logical_[begin]);
      size_t end = begin;
      while (end < logical_.size() && std::get<0>(logical_[end]) == op) {
        ++count_on_device[std::get<1>(logical_[end])];
        ++end;
      }
      for (size_t i = begin; i < end; ++i) {
        const int device = std::get<1>(logical_[i]);
        if (count_on_device[device_image_[device]] != count_on_device[device]) kept_op_[op] = 0;
      }
      for (size_t i = begin; i < end; ++i) count_on_device[std::get<1>(logical_[i])] = 0;
      begin = end;
    }
    return true;
  }

  // `entries` stably sorted by element `key` (0: op, 1: device) of each, below `bound`.
  static std::vector<std::tuple<OpId, int, TaskId>> StableByKey(
      std::vector<std::tuple<OpId, int, TaskId>> entries, int key, size_t bound) {
    auto key_of = [key](const std::tuple<OpId, int, TaskId>& entry) {
      return key == 0 ? static_cast<size_t>(std::get<0>(entry))
                      : static_cast<size_t>(std::get<1>(entry));
    };
    std::vector<size_t> start(bound + 1, 0);
    for (const auto& entry : entries) ++start[key_of(entry) + 1];
    for (size_t k = 0; k < bound; ++k) start[k + 1] += start[k];
    std::vector<std::tuple<OpId, int, TaskId>> sorted(entries.size());
    for (const auto& entry : entries) sorted[start[key_of(entry)]++] = entry;
    return sorted;
  }

  bool Kept(const TaskDef& task) const { return task.logical_op >= 0 && kept_op_[task.logical_op]; }

  // The tail: tasks of no kept op (transfers, ops on devices the renaming moves elsewhere, such
  // as a sink on one device) whose outputs only tail tasks read.
  void FindTail() {
    std::vector<int64_t> core_readers(tasks_.tasks().size(), 0);
    std::vector<TaskId> joined;
    for (const TaskDef& task : tasks_.tasks()) {
      for (RegisterId output : task.outputs) {
        core_readers[task.id] += static_cast<int64_t>(tasks_.register_at(output).readers.size());
      }
      if (!Kept(task) && core_readers[task.id] == 0) joined.push_back(task.id);
    }
    while (!joined.empty()) {
      const TaskId id = joined.back();
      joined.pop_back();
      symmetry_.tail[id] = 1;
      for (RegisterId input : tasks_.task(id).inputs) {
        const TaskId producer = tasks_.register_at(input).producer;
        if (--core_readers[producer] == 0 && !Kept(tasks_.task(producer))) {
          joined.push_back(producer);
        }
      }
    }
  }

  // The k-th task of a kept op on device d maps to the k-th of that op on device_image[d].
  void Seed() {
    std::vector<size_t> first_on_device(device_image_.size(), 0);
    for (size_t begin = 0; begin < logical_.size();) {
      const OpId op = std::get<0>(logical_[begin]);
      size_t end = begin;
      while (end < logical_.size() && std::get<0>(logical_[end]) == op) ++end;
      if (kept_op_[op]) {
        for (size_t i = end; i-- > begin;) first_on_device[std::get<1>(logical_[i])] = i;
        for (size_t i = begin; i < end; ++i) {
          const int device = std::get<1>(logical_[i]);
          const size_t rank = i - first_on_device[device];
          MapTask(std::get<2>(logical_[i]),
                  std::get<2>(logical_[first_on_device[device_image_[device]] + rank]));
        }
      }
      begin = end;
    }
  }

  void MapTask(TaskId from, TaskId to) {
    if (InTail(from) || InTail(to) || symmetry_.task_image[from] >= 0 || task_preimage_[to] >= 0 ||
        tasks_.task(from).period != tasks_.task(to).period) {
      return;
    }
    symmetry_.task_image[from] = to;
    task_preimage_[to] = from;
    queue_.push_back(from);
  }

  // Readers of `id` outside the tail, in order: the register's own list when the tail reads
  // none of it (the common case, without a copy), else `*scratch` filled with them.
  const std::vector<RegisterReader>& CoreReadersOf(RegisterId id,
                                                   std::vector<RegisterReader>* scratch) const {
    const std::vector<RegisterReader>& readers = tasks_.register_at(id).readers;
    bool any_tail = false;
    for (const RegisterReader& reader : readers) any_tail = any_tail || InTail(reader.task);
    if (!any_tail) return readers;
    scratch->clear();
    for (const RegisterReader& reader : readers) {
      if (!InTail(reader.task)) scratch->push_back(reader);
    }
    return *scratch;
  }

  void MapRegister(RegisterId from, RegisterId to) {
    if (symmetry_.register_image[from] >= 0 || register_preimage_[to] >= 0 ||
        tasks_.register_at(from).period != tasks_.register_at(to).period) {
      return;
    }
    symmetry_.register_image[from] = to;
    register_preimage_[to] = from;
    MapTask(tasks_.register_at(from).producer, tasks_.register_at(to).producer);
    // The pairs first: the scratch vectors serve the next call.
    const std::vector<RegisterReader>& a = CoreReadersOf(from, &scratch_a_);
    const std::vector<RegisterReader>& b = CoreReadersOf(to, &scratch_b_);
    PairReaders(a, b, &pairing_);
    pairs_.clear();
    for (size_t i = 0; i < a.size(); ++i) {
      if (pairing_[i] >= 0) pairs_.emplace_back(a[i].task, b[pairing_[i]].task);
    }
    for (const auto& [reader, image] : pairs_) MapTask(reader, image);
  }

  // Whether reader `y` can be the image of reader `x`: same phase, kind and op, on the image of
  // x's device.
  bool Corresponds(const RegisterReader& x, const RegisterReader& y) const {
    return x.phase == y.phase && class_[x.task] == class_[y.task] &&
           device_image_[device_[x.task]] == device_[y.task];
  }

  // Pairs each reader in `a` with one in `b` that corresponds to it (-1: none): in order when
  // they all do so; else rotated, reader i with reader (i + r) % n for the first r that makes
  // them all correspond (a ring's chunks read as ranges of one gradient register, in chunk
  // order: replica m + 1 reads chunk q + c where replica m reads chunk q; DECISIONS 38); else
  // each with the first unpaired one that does (an all-gather's copies to the other replicas,
  // made in device order). True when every reader of both is paired.
  bool PairReaders(const std::vector<RegisterReader>& a, const std::vector<RegisterReader>& b,
                   std::vector<int64_t>* pairing) const {
    pairing->assign(a.size(), -1);
    const size_t n = a.size();
    if (n == b.size()) {
      // Rotations only for short lists (a ring's readers): O(n^2) in the worst case.
      const size_t rotations = n <= kMaxRotatedReaders ? n : 1;
      for (size_t rotation = 0; rotation < rotations; ++rotation) {
        bool alike = true;
        for (size_t i = 0; i < n && alike; ++i) alike = Corresponds(a[i], b[(i + rotation) % n]);
        if (!alike) continue;
        for (size_t i = 0; i < n; ++i) (*pairing)[i] = static_cast<int64_t>((i + rotation) % n);
        return true;
      }
    }
    std::vector<char>& paired = paired_;
    paired.assign(b.size(), 0);
    size_t count = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      for (size_t j = 0; j < b.size(); ++j) {
        if (paired[j] || !Corresponds(a[i], b[j])) continue;
        paired[j] = 1;
        (*pairing)[i] = static_cast<int64_t>(j);
        ++count;
        break;
      }
    }
    return count == a.size() && count == b.size();
  }

  bool ReadersAlike(RegisterId a, RegisterId b) const {
    return PairReaders(CoreReadersOf(a, &scratch_a_), CoreReadersOf(b, &scratch_b_), &pairing_);
  }

  // The rotation r with output q of `from` matching output (q + r) % k of `to`: 0 when the
  // readers agree in order, else the first that makes them all agree (a ring's chunks: replica
  // m + 1 plays for chunk q + c the part replica m plays for chunk q), else 0.
  size_t OutputRotation(TaskId from, TaskId to) const {
    const std::vector<RegisterId>& a = tasks_.task(from).outputs;
    const std::vector<RegisterId>& b = tasks_.task(to).outputs;
    const size_t k = a.size();
    if (k <= 1 || k != b.size()) return 0;
    for (size_t rotation = 0; rotation < k; ++rotation) {
      bool alike = true;
      for (size_t q = 0; q < k && alike; ++q) alike = ReadersAlike(a[q], b[(q + rotation) % k]);
      if (alike) return rotation;
    }
    return 0;
  }

  // Maps the outputs of every queued task, and through them their readers.
  void Follow() {
    while (!queue_.empty()) {
      const TaskId from = queue_.back();
      queue_.pop_back();
      const TaskId to = symmetry_.task_image[from];
      const std::vector<RegisterId>& a = tasks_.task(from).outputs;
      const std::vector<RegisterId>& b = tasks_.task(to).outputs;
      const size_t rotation = OutputRotation(from, to);
      for (size_t q = 0; q < a.size() && q < b.size(); ++q) {
        MapRegister(a[q], b[(q + rotation) % b.size()]);
      }
    }
  }

  // A register no mapped producer reached (made by a task with no inputs, such as a zero fill,
  // or by a task of an op the renaming does not keep) maps by its position among a mapped
  // reader's inputs. True when it mapped any.
  bool MapUnmappedInputs() {
    bool progress = false;
    for (TaskId id = 0; id < static_cast<TaskId>(symmetry_.task_image.size()); ++id) {
      const TaskId image = symmetry_.task_image[id];
      if (image < 0) continue;
      const std::vector<RegisterId>& a = tasks_.task(id).inputs;
      const std::vector<RegisterId>& b = tasks_.task(image).inputs;
      for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
        if (symmetry_.register_image[a[k]] >= 0 || register_preimage_[b[k]] >= 0) continue;
        MapRegister(a[k], b[k]);
        progress = progress || symmetry_.register_image[a[k]] >= 0;
      }
    }
    return progress;
  }

  const TaskGraph& tasks_;
  const std::vector<int>& device_image_;
  TaskGraphSymmetry symmetry_;
  std::vector<TaskId> task_preimage_;
  std::vector<RegisterId> register_preimage_;
  std::vector<std::tuple<OpId, int, TaskId>> logical_;
  std::vector<char> kept_op_;  // Indexed by logical op id.
  // Per task, compact for Corresponds: its device, and its op type and kind as one number.
  std::vector<int> device_;
  std::vector<int32_t> class_;
  std::vector<TaskId> queue_;  // Mapped tasks whose outputs are not mapped yet.
  // Scratch space of MapRegister and ReadersAlike, kept to spare allocations.
  mutable std::vector<RegisterReader> scratch_a_;
  mutable std::vector<RegisterReader> scratch_b_;
  mutable std::vector<int64_t> pairing_;
  mutable std::vector<char> paired_;
  std::vector<std::pair<TaskId, TaskId>> pairs_;
};

// Cuts links of the partial map `image` (a chain of elements each mapped to the next) so that
// every chain is a cycle of exactly `replicas` elements or a path of at most `replicas`.
void NormalizeChains(std::vector<int64_t>* image, int64_t replicas) {
  const int64_t count = static_cast<int64_t>(image->size());
  std::vector<char> has_preimage(count, 0);
  for (int64_t id = 0; id < count; ++id) {
    if ((*image)[id] >= 0) has_preimage[(*image)[id]] = 1;
  }
  std::vector<char> seen(count, 0);
  // Paths, from their first element: cut after every `replicas` elements.
  for (int64_t id = 0; id < count; ++id) {
    if (has_preimage[id]) continue;
    int64_t length = 0;
    for (int64_t member = id; member >= 0;) {
      seen[member] = 1;
      const int64_t next = (*image)[member];
      if (++length == replicas && next >= 0) {
        (*image)[member] = -1;
        length = 0;
      }
      member = next;
    }
  }
  // What is left are cycles: keep those of `replicas` elements; cut the others open.
  for (int64_t id = 0; id < count; ++id) {
    if (seen[id]) continue;
    int64_t length = 0;
    for (int64_t member = id; !seen[member]; member = (*image)[member]) {
      seen[member] = 1;
      ++length;
    }
    if (length == replicas) continue;
    // Cut after the element before `id`, then into paths of at most `replicas`.
    int64_t member = id;
    for (int64_t k = 1; k < length; ++k) member = (*image)[member];
    (*image)[member] = -1;
    length = 0;
    for (member = id; member >= 0;) {
      const int64_t next = (*image)[member];
      if (++length == replicas && next >= 0) {
        (*image)[member] = -1;
        length = 0;
      }
      member = next;
    }
  }
}

// A register maps only where its producer maps to the image's producer.
void CutRegistersWhoseProducersDoNotFollow(const TaskGraph& tasks, TaskGraphSymmetry* symmetry) {
  for (const TaskRegister& reg : tasks.registers()) {
    const RegisterId image = symmetry->register_image[reg.id];
    if (image >= 0 && symmetry->task_image[reg.producer] != tasks.register_at(image).producer) {
      symmetry->register_image[reg.id] = -1;
    }
  }
}

}  // namespace

Chains ChainsOf(const std::vector<int64_t>& image, const std::vector<char>* excluded) {
  const int64_t size = static_cast<int64_t>(image.size());
  Chains chains;
  chains.chain.assign(size, -1);
  chains.position.assign(size, 0);
  std::vector<char> has_preimage(size, 0);
  for (int64_t id = 0; id < size; ++id) {
    if (image[id] >= 0) has_preimage[image[id]] = 1;
  }
  auto walk = [&](int64_t start) {
    int64_t position = 0;
    for (int64_t member = start; member >= 0 && chains.chain[member] < 0; member = image[member]) {
      chains.chain[member] = chains.count;
      chains.position[member] = position++;
    }
    ++chains.count;
  };
  for (int64_t id = 0; id < size; ++id) {
    if ((excluded == nullptr || !(*excluded)[id]) && !has_preimage[id]) walk(id);
  }
  for (int64_t id = 0; id < size; ++id) {
    if ((excluded == nullptr || !(*excluded)[id]) && chains.chain[id] < 0) walk(id);
  }
  return chains;
}

Status VerifySymmetry(const TaskGraph& tasks, const TaskGraphSymmetry& symmetry, int64_t replicas) {
  const size_t task_count = tasks.tasks().size();
  const size_t register_count = tasks.registers().size();
  if (symmetry.task_image.size() != task_count || symmetry.tail.size() != task_count ||
      symmetry.register_image.size() != register_count) {
    return FailedPreconditionError("the correspondence does not cover the task graph");
  }
  std::vector<char> hit(std::max(task_count, register_count), 0);
  for (TaskId id = 0; id < static_cast<TaskId>(task_count); ++id) {
    const TaskId image = symmetry.task_image[id];
    if (image < 0) continue;
    if (image >= static_cast<TaskId>(task_count) || hit[image] || symmetry.tail[image] ||
        symmetry.tail[id]) {
      return FailedPreconditionError("the images of the core's tasks are not one to one (task " +
                                     TaskName(tasks, id) + ")");
    }
    hit[image] = 1;
    if (tasks.task(image).period != tasks.task(id).period) {
      return FailedPreconditionError("task " + TaskName(tasks, id) + " and its image " +
                                     TaskName(tasks, image) + " differ in period");
    }
  }
  std::fill(hit.begin(), hit.end(), 0);
  for (RegisterId id = 0; id < static_cast<RegisterId>(register_count); ++id) {
    const TaskRegister& reg = tasks.register_at(id);
    const RegisterId image = symmetry.register_image[id];
    if (symmetry.tail[reg.producer]) {
      for (const RegisterReader& reader : reg.readers) {
        if (!symmetry.tail[reader.task]) {
          return FailedPreconditionError("register " + RegisterName(tasks, id) +
                                         " of the tail is read by " + TaskName(tasks, reader.task) +
                                         " outside it");
        }
      }
      if (image >= 0) {
        return FailedPreconditionError("register " + RegisterName(tasks, id) +
                                       " of the tail has an image");
      }
      continue;
    }
    for (const RegisterReader& reader : reg.readers) {
      if (symmetry.tail[reader.task] && reader.phase != 0) {
        return FailedPreconditionError("register " + RegisterName(tasks, id) +
                                       " is written in place by " + TaskName(tasks, reader.task) +
                                       " of the tail");
      }
    }
    if (image < 0) continue;
    if (image >= static_cast<RegisterId>(register_count) || hit[image] ||
        symmetry.tail[tasks.register_at(image).producer]) {
      return FailedPreconditionError(
          "the images of the core's registers are not one to one "
          "(register " +
          RegisterName(tasks, id) + ")");
    }
    hit[image] = 1;
    const TaskRegister& other = tasks.register_at(image);
    if (reg.period != other.period || symmetry.task_image[reg.producer] != other.producer) {
      return FailedPreconditionError("register " + RegisterName(tasks, id) + " and its image " +
                                     RegisterName(tasks, image) +
                                     " differ in period or have producers that do not correspond");
    }
  }
  // Chains: cycles of exactly `replicas`, or paths of at most `replicas`.
  for (const std::vector<int64_t>* image : {&symmetry.task_image, &symmetry.register_image}) {
    const Chains chains = ChainsOf(*image, nullptr);
    std::vector<int64_t> length(chains.count, 0);
    std::vector<char> cyclic(chains.count, 0);
    for (size_t id = 0; id < image->size(); ++id) {
      ++length[chains.chain[id]];
      const int64_t next = (*image)[id];
      if (next >= 0 && chains.position[next] == 0) cyclic[chains.chain[id]] = 1;
    }
    for (int64_t chain = 0; chain < chains.count; ++chain) {
      if (length[chain] > replicas || (cyclic[chain] && length[chain] != replicas)) {
        return FailedPreconditionError(
            "a chain of corresponding " +
            std::string(image == &symmetry.task_image ? "tasks" : "registers") + " has " +
            std::to_string(length[chain]) + " members for " + std::to_string(replicas) +
            " replicas");
      }
    }
  }
  return Status::Ok();
}

std::optional<TaskGraphSymmetry> FindReplicaSymmetry(const TaskGraph& tasks,
                                                     const std::vector<int>& device_image,
                                                     int64_t replicas, std::string* why_not) {
  SymmetryProposal proposal(tasks, device_image);
  if (!proposal.Build(why_not)) return std::nullopt;
  TaskGraphSymmetry symmetry = proposal.Take();
  NormalizeChains(&symmetry.task_image, replicas);
  CutRegistersWhoseProducersDoNotFollow(tasks, &symmetry);
  NormalizeChains(&symmetry.register_image, replicas);
  Status verified = VerifySymmetry(tasks, symmetry, replicas);
  if (!verified.ok()) {
    *why_not = verified.message();
    return std::nullopt;
  }
  return symmetry;
}

}  // namespace compiler
}  // namespace softwire
