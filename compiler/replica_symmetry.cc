#include "compiler/replica_symmetry.h"

#include <algorithm>
#include <tuple>
#include <utility>

namespace softwire {
namespace compiler {
namespace {

std::string TaskName(const TaskGraph& tasks, TaskId id) {
  return "'" + tasks.task(id).name + "'";
}
std::string RegisterName(const TaskGraph& tasks, RegisterId id) {
  return "'" + tasks.register_at(id).name + "'";
}

bool InTail(const TaskGraphSymmetry& symmetry, TaskId task) {
  return symmetry.task_image[task] < 0;
}

// The readers of register `id` that are in the core, in order.
std::vector<RegisterReader> CoreReaders(const TaskGraph& tasks, const TaskGraphSymmetry& symmetry,
                                        RegisterId id) {
  std::vector<RegisterReader> readers;
  for (const RegisterReader& reader : tasks.register_at(id).readers) {
    if (!InTail(symmetry, reader.task)) readers.push_back(reader);
  }
  return readers;
}

// The core readers of `b` are the images of the core readers of `a`, in the same phases, as
// multisets.
bool ReadersCorrespond(const TaskGraph& tasks, const TaskGraphSymmetry& symmetry, RegisterId a,
                       RegisterId b) {
  const std::vector<RegisterReader> from = CoreReaders(tasks, symmetry, a);
  const std::vector<RegisterReader> to = CoreReaders(tasks, symmetry, b);
  if (from.size() != to.size()) return false;
  bool in_order = true;
  for (size_t i = 0; i < from.size() && in_order; ++i) {
    in_order = symmetry.task_image[from[i].task] == to[i].task && from[i].phase == to[i].phase;
  }
  if (in_order) return true;
  std::vector<std::pair<TaskId, int>> images;
  std::vector<std::pair<TaskId, int>> targets;
  for (const RegisterReader& reader : from) {
    images.emplace_back(symmetry.task_image[reader.task], reader.phase);
  }
  for (const RegisterReader& reader : to) targets.emplace_back(reader.task, reader.phase);
  std::sort(images.begin(), images.end());
  std::sort(targets.begin(), targets.end());
  return images == targets;
}

// Builds the proposal of FindReplicaSymmetry: the tail, then seeds from the logical ops, then
// the core's edges.
class SymmetryProposal {
 public:
  SymmetryProposal(const TaskGraph& tasks, const std::vector<int>& device_image)
      : tasks_(tasks), device_image_(device_image) {
    symmetry_.task_image.assign(tasks.tasks().size(), -1);
    symmetry_.register_image.assign(tasks.registers().size(), -1);
    in_tail_.assign(tasks.tasks().size(), 0);
  }

  // False with `*why_not` set when the edges contradict the seeds.
  bool Build(std::string* why_not) {
    if (!SortLogicalTasks(why_not)) return false;
    FindTail();
    if (!Seed(why_not)) return false;
    while (true) {
      if (!Follow(why_not)) return false;
      bool progress = false;
      if (!MapUnmappedInputs(&progress, why_not)) return false;
      if (!progress) break;
    }
    for (TaskId id = 0; id < static_cast<TaskId>(symmetry_.task_image.size()); ++id) {
      if (!in_tail_[id] && symmetry_.task_image[id] < 0) {
        *why_not = "task " + TaskName(tasks_, id) + " corresponds to no task of another replica";
        return false;
      }
    }
    for (const TaskRegister& reg : tasks_.registers()) {
      if (!in_tail_[reg.producer] && symmetry_.register_image[reg.id] < 0) {
        *why_not = "register " + RegisterName(tasks_, reg.id) +
                   " corresponds to no register of another replica";
        return false;
      }
    }
    return true;
  }

  TaskGraphSymmetry Take() { return std::move(symmetry_); }

 private:
  // The logical ops' tasks sorted by (op, device, id), and per op whether the renaming keeps its
  // devices with as many tasks on each.
  bool SortLogicalTasks(std::string* why_not) {
    for (const TaskDef& task : tasks_.tasks()) {
      if (task.logical_op < 0) continue;
      if (task.device < 0 || task.device >= static_cast<int>(device_image_.size())) {
        *why_not = "task " + TaskName(tasks_, task.id) + " has no device";
        return false;
      }
      logical_.emplace_back(task.logical_op, task.device, task.id);
      if (task.logical_op >= static_cast<OpId>(kept_op_.size())) {
        kept_op_.resize(task.logical_op + 1, 1);
      }
    }
    std::sort(logical_.begin(), logical_.end());
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
      in_tail_[id] = 1;
      for (RegisterId input : tasks_.task(id).inputs) {
        const TaskId producer = tasks_.register_at(input).producer;
        if (--core_readers[producer] == 0 && !Kept(tasks_.task(producer))) {
          joined.push_back(producer);
        }
      }
    }
  }

  // The k-th task of a kept op on device d maps to the k-th of that op on device_image[d].
  bool Seed(std::string* why_not) {
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
          const TaskId image = std::get<2>(logical_[first_on_device[device_image_[device]] + rank]);
          if (!MapTask(std::get<2>(logical_[i]), image, why_not)) return false;
        }
      }
      begin = end;
    }
    return true;
  }

  bool MapTask(TaskId from, TaskId to, std::string* why_not) {
    if (in_tail_[from] != in_tail_[to]) {
      *why_not = "task " + TaskName(tasks_, from) + " would correspond to " + TaskName(tasks_, to) +
                 ", but only one of them feeds the other replicas";
      return false;
    }
    if (in_tail_[from]) return true;  // A tail task's readers are tail tasks.
    TaskId& image = symmetry_.task_image[from];
    if (image == to) return true;
    if (image >= 0) {
      *why_not = "task " + TaskName(tasks_, from) + " would correspond to both " +
                 TaskName(tasks_, image) + " and " + TaskName(tasks_, to);
      return false;
    }
    image = to;
    queue_.push_back(from);
    return true;
  }

  // Readers of `id` outside the tail, in order.
  std::vector<RegisterReader> CoreReadersOf(RegisterId id) const {
    std::vector<RegisterReader> readers;
    for (const RegisterReader& reader : tasks_.register_at(id).readers) {
      if (!in_tail_[reader.task]) readers.push_back(reader);
    }
    return readers;
  }

  bool MapRegister(RegisterId from, RegisterId to, std::string* why_not) {
    RegisterId& image = symmetry_.register_image[from];
    if (image == to) return true;
    if (image >= 0) {
      *why_not = "register " + RegisterName(tasks_, from) + " would correspond to both " +
                 RegisterName(tasks_, image) + " and " + RegisterName(tasks_, to);
      return false;
    }
    image = to;
    const std::vector<RegisterReader> a = CoreReadersOf(from);
    const std::vector<RegisterReader> b = CoreReadersOf(to);
    if (a.size() != b.size()) {
      *why_not = "register " + RegisterName(tasks_, from) + " has " + std::to_string(a.size()) +
                 " readers, its counterpart " + RegisterName(tasks_, to) + " " +
                 std::to_string(b.size());
      return false;
    }
    if (!MapTask(tasks_.register_at(from).producer, tasks_.register_at(to).producer, why_not)) {
      return false;
    }
    std::vector<size_t> pairing;
    if (!PairReaders(a, b, &pairing)) {
      *why_not = "the readers of register " + RegisterName(tasks_, from) +
                 " do not correspond to those of " + RegisterName(tasks_, to);
      return false;
    }
    for (size_t i = 0; i < a.size(); ++i) {
      if (!MapTask(a[i].task, b[pairing[i]].task, why_not)) return false;
    }
    return true;
  }

  // Pairs each reader in `a` with one in `b` that corresponds to it: in order when they all do
  // so, otherwise each with the first unpaired one that does (an all-gather's copies to the
  // other replicas, made in device order). False when some reader has none.
  bool PairReaders(const std::vector<RegisterReader>& a, const std::vector<RegisterReader>& b,
                   std::vector<size_t>* pairing) const {
    if (a.size() != b.size()) return false;
    pairing->resize(a.size());
    bool in_order = true;
    for (size_t i = 0; i < a.size() && in_order; ++i) in_order = Corresponds(a[i], b[i]);
    std::vector<char> paired(in_order ? 0 : b.size(), 0);
    for (size_t i = 0; i < a.size(); ++i) {
      size_t j = i;
      if (!in_order) {
        for (j = 0; j < b.size() && (paired[j] || !Corresponds(a[i], b[j])); ++j) {
        }
        if (j == b.size()) return false;
        paired[j] = 1;
      }
      (*pairing)[i] = j;
    }
    return true;
  }

  // Whether reader `y` can be the image of reader `x`: same phase, kind and op, on the image of
  // x's device.
  bool Corresponds(const RegisterReader& x, const RegisterReader& y) const {
    const TaskDef& u = tasks_.task(x.task);
    const TaskDef& v = tasks_.task(y.task);
    return x.phase == y.phase && u.kind == v.kind && u.device >= 0 &&
           u.device < static_cast<int>(device_image_.size()) &&
           device_image_[u.device] == v.device && u.op_type == v.op_type;
  }

  // Whether registers `a` and `b` have core readers that correspond (PairReaders).
  bool ReadersAlike(RegisterId a, RegisterId b) const {
    std::vector<size_t> pairing;
    return PairReaders(CoreReadersOf(a), CoreReadersOf(b), &pairing);
  }

  // The rotation r with output q of `from` matching output (q + r) % k of `to`: 0 when the
  // readers agree in order, else the first that makes them agree (a ring's chunks: replica
  // m + 1 plays for chunk q + c the part replica m plays for chunk q); -1 when none does.
  int OutputRotation(TaskId from, TaskId to) const {
    const std::vector<RegisterId>& a = tasks_.task(from).outputs;
    const std::vector<RegisterId>& b = tasks_.task(to).outputs;
    const size_t k = a.size();
    if (from == to || k <= 1) return 0;
    for (size_t rotation = 0; rotation < k; ++rotation) {
      bool alike = true;
      for (size_t q = 0; q < k && alike; ++q) alike = ReadersAlike(a[q], b[(q + rotation) % k]);
      if (alike) return static_cast<int>(rotation);
    }
    return -1;
  }

  // Maps the outputs of every queued task, and through them their readers.
  bool Follow(std::string* why_not) {
    while (!queue_.empty()) {
      const TaskId from = queue_.back();
      queue_.pop_back();
      const TaskId to = symmetry_.task_image[from];
      const std::vector<RegisterId>& a = tasks_.task(from).outputs;
      const std::vector<RegisterId>& b = tasks_.task(to).outputs;
      if (a.size() != b.size()) {
        *why_not = "task " + TaskName(tasks_, from) + " has " + std::to_string(a.size()) +
                   " outputs, its counterpart " + TaskName(tasks_, to) + " " +
                   std::to_string(b.size());
        return false;
      }
      const int rotation = OutputRotation(from, to);
      if (rotation < 0) {
        *why_not = "the outputs of task " + TaskName(tasks_, from) +
                   " are read unlike those of its counterpart " + TaskName(tasks_, to);
        return false;
      }
      for (size_t q = 0; q < a.size(); ++q) {
        if (!MapRegister(a[q], b[(q + rotation) % a.size()], why_not)) return false;
      }
    }
    return true;
  }

  // A register no mapped producer reached (made by a task with no inputs, such as a zero fill,
  // or by a task of an op the renaming does not keep) maps by its position among a mapped
  // reader's inputs.
  bool MapUnmappedInputs(bool* progress, std::string* why_not) {
    for (TaskId id = 0; id < static_cast<TaskId>(symmetry_.task_image.size()); ++id) {
      const TaskId image = symmetry_.task_image[id];
      if (image < 0) continue;
      const std::vector<RegisterId>& a = tasks_.task(id).inputs;
      const std::vector<RegisterId>& b = tasks_.task(image).inputs;
      for (size_t k = 0; k < a.size(); ++k) {
        if (symmetry_.register_image[a[k]] >= 0) continue;
        if (k >= b.size()) {
          *why_not = "task " + TaskName(tasks_, id) + " reads more registers than its " +
                     "counterpart " + TaskName(tasks_, image);
          return false;
        }
        if (!MapRegister(a[k], b[k], why_not)) return false;
        *progress = true;
      }
    }
    return true;
  }

  const TaskGraph& tasks_;
  const std::vector<int>& device_image_;
  TaskGraphSymmetry symmetry_;
  std::vector<std::tuple<OpId, int, TaskId>> logical_;
  std::vector<char> kept_op_;  // Indexed by logical op id.
  std::vector<char> in_tail_;  // Indexed by task id.
  std::vector<TaskId> queue_;  // Mapped tasks whose outputs are not mapped yet.
};

// Per element with an image (>= 0): the lowest id of its cycle under `image` (a permutation of
// those elements), and the cycle's length at that id; -1 and 0 elsewhere.
void Orbits(const std::vector<int64_t>& image, std::vector<int64_t>* representative,
            std::vector<int64_t>* size) {
  representative->assign(image.size(), -1);
  size->assign(image.size(), 0);
  for (int64_t id = 0; id < static_cast<int64_t>(image.size()); ++id) {
    if (image[id] < 0 || (*representative)[id] >= 0) continue;
    int64_t length = 0;
    for (int64_t member = id; (*representative)[member] < 0; member = image[member]) {
      (*representative)[member] = id;  // Ids are visited in order: `id` is the cycle's lowest.
      ++length;
    }
    (*size)[id] = length;
  }
}

}  // namespace

Status VerifySymmetry(const TaskGraph& tasks, const TaskGraphSymmetry& symmetry) {
  const size_t task_count = tasks.tasks().size();
  const size_t register_count = tasks.registers().size();
  if (symmetry.task_image.size() != task_count ||
      symmetry.register_image.size() != register_count) {
    return FailedPreconditionError("the symmetry does not cover the task graph");
  }
  std::vector<char> hit(std::max(task_count, register_count), 0);
  for (TaskId id = 0; id < static_cast<TaskId>(task_count); ++id) {
    const TaskId image = symmetry.task_image[id];
    if (image < 0) continue;  // The tail.
    if (image >= static_cast<TaskId>(task_count) || hit[image] || InTail(symmetry, image)) {
      return FailedPreconditionError("the images of the core's tasks are not one to one (task " +
                                     TaskName(tasks, id) + ")");
    }
    hit[image] = 1;
    if (tasks.task(image).period != tasks.task(id).period) {
      return FailedPreconditionError(
          "task " + TaskName(tasks, id) + " has period " + std::to_string(tasks.task(id).period) +
          ", its image " + TaskName(tasks, image) + " " + std::to_string(tasks.task(image).period));
    }
  }
  std::fill(hit.begin(), hit.end(), 0);
  for (RegisterId id = 0; id < static_cast<RegisterId>(register_count); ++id) {
    const TaskRegister& a = tasks.register_at(id);
    const RegisterId image = symmetry.register_image[id];
    if (InTail(symmetry, a.producer)) {
      for (const RegisterReader& reader : a.readers) {
        if (!InTail(symmetry, reader.task)) {
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
    if (image < 0 || image >= static_cast<RegisterId>(register_count) || hit[image]) {
      return FailedPreconditionError(
          "the images of the core's registers are not one to one "
          "(register " +
          RegisterName(tasks, id) + ")");
    }
    hit[image] = 1;
    const TaskRegister& b = tasks.register_at(image);
    const std::string pair =
        "register " + RegisterName(tasks, id) + " and its image " + RegisterName(tasks, image);
    if (a.period != b.period) return FailedPreconditionError(pair + " differ in period");
    if (symmetry.task_image[a.producer] != b.producer) {
      return FailedPreconditionError(pair + " have producers that do not correspond");
    }
    if (!ReadersCorrespond(tasks, symmetry, id, image)) {
      return FailedPreconditionError(pair + " have readers that do not correspond");
    }
    for (const RegisterReader& reader : a.readers) {
      if (InTail(symmetry, reader.task) && reader.phase != 0) {
        return FailedPreconditionError("register " + RegisterName(tasks, id) +
                                       " is written in place by " + TaskName(tasks, reader.task) +
                                       " of the tail");
      }
    }
  }
  return Status::Ok();
}

std::optional<TaskGraphSymmetry> FindReplicaSymmetry(const TaskGraph& tasks,
                                                     const std::vector<int>& device_image,
                                                     std::string* why_not) {
  SymmetryProposal proposal(tasks, device_image);
  if (!proposal.Build(why_not)) return std::nullopt;
  TaskGraphSymmetry symmetry = proposal.Take();
  Status verified = VerifySymmetry(tasks, symmetry);
  if (!verified.ok()) {
    *why_not = verified.message();
    return std::nullopt;
  }
  return symmetry;
}

std::optional<OrbitGraph> BuildOrbitGraph(const TaskGraph& tasks, const TaskGraphSymmetry& symmetry,
                                          std::string* why_not) {
  std::vector<int64_t> task_representative, task_orbit, register_representative, register_orbit;
  Orbits(symmetry.task_image, &task_representative, &task_orbit);
  Orbits(symmetry.register_image, &register_representative, &register_orbit);
  // Quotient index of each task: its orbit's, or its own in the tail.
  std::vector<TaskId> task_index(tasks.tasks().size(), -1);
  OrbitGraph orbits;
  for (const TaskDef& task : tasks.tasks()) {
    const bool tail = InTail(symmetry, task.id);
    if (!tail && task_representative[task.id] != task.id) continue;
    TaskDef copy;
    copy.name = task.name;
    copy.kind = task.kind;
    copy.device = task.device;
    copy.period = task.period;
    copy.firings = task.firings;
    task_index[task.id] = orbits.graph.AddTask(std::move(copy));
    orbits.orbit_size.push_back(tail ? 1 : task_orbit[task.id]);
  }
  auto index_of = [&](TaskId task) {
    return task_index[InTail(symmetry, task) ? task : task_representative[task]];
  };
  std::vector<RegisterId> register_index(tasks.registers().size(), -1);
  for (const TaskRegister& reg : tasks.registers()) {
    const bool tail = InTail(symmetry, reg.producer);
    if (!tail && register_representative[reg.id] != reg.id) continue;
    TaskRegister copy;
    copy.name = reg.name;
    copy.producer = index_of(reg.producer);
    copy.device = reg.device;
    copy.type = reg.type;
    copy.period = reg.period;
    copy.slots = reg.slots;
    copy.bytes_per_slot = reg.bytes_per_slot;
    if (!tail) {  // The fewest slots of the orbit (docs/DECISIONS.md: a stricter plan).
      for (RegisterId member = symmetry.register_image[reg.id]; member != reg.id;
           member = symmetry.register_image[member]) {
        copy.slots = std::min(copy.slots, tasks.register_at(member).slots);
      }
    }
    const RegisterId index = orbits.graph.AddRegister(std::move(copy));
    register_index[reg.id] = index;
    TaskId phase_one = -1;
    for (const RegisterReader& reader : reg.readers) {
      if (reader.phase == 1) phase_one = index_of(reader.task);
    }
    for (const RegisterReader& reader : reg.readers) {
      if (!tail && InTail(symmetry, reader.task)) continue;  // Added below, from every member.
      const TaskId task = index_of(reader.task);
      if (reader.phase == 0 && task == phase_one) {
        *why_not = "task " + TaskName(tasks, reader.task) + " and the phase-1 reader of register " +
                   RegisterName(tasks, reg.id) + " are one orbit";
        return std::nullopt;
      }
      orbits.graph.AddReader(index, task, reader.phase);
    }
  }
  // Each tail task reads the representative of every core register it reads, as its copies
  // for the other replicas would (docs/DECISIONS.md).
  for (const TaskRegister& reg : tasks.registers()) {
    if (InTail(symmetry, reg.producer)) continue;
    for (const RegisterReader& reader : reg.readers) {
      if (!InTail(symmetry, reader.task)) continue;
      if (reader.phase != 0) {
        *why_not = "task " + TaskName(tasks, reader.task) + " of the tail writes register " +
                   RegisterName(tasks, reg.id) + " in place";
        return std::nullopt;
      }
      orbits.graph.AddReader(register_index[register_representative[reg.id]],
                             task_index[reader.task], 0);
    }
  }
  return orbits;
}

}  // namespace compiler
}  // namespace softwire
