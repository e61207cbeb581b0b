// BuildOrbitGraph (replica_symmetry.h): the quotient the deadlock check simulates, one task and
// register per chain of a correspondence (docs/DECISIONS.md 39).
#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "compiler/replica_symmetry.h"

namespace softwire {
namespace compiler {
namespace {

std::string RegisterName(const TaskGraph& tasks, RegisterId id) {
  return "'" + tasks.register_at(id).name + "'";
}

}  // namespace

std::optional<OrbitGraph> BuildOrbitGraph(const TaskGraph& tasks, const TaskGraphSymmetry& symmetry,
                                          int64_t replicas, std::string* why_not) {
  // Roles: chains of the core; every tail task and register is a role of its own.
  const Chains task_roles = ChainsOf(symmetry.task_image, nullptr);
  const Chains register_roles = ChainsOf(symmetry.register_image, nullptr);
  auto tail_register = [&](const TaskRegister& reg) { return symmetry.tail[reg.producer] != 0; };
  OrbitGraph orbits;
  orbits.graph.Reserve(task_roles.count, register_roles.count);
  // Orbit-graph task of each task role.
  std::vector<TaskId> task_index(task_roles.count, -1);
  for (const TaskDef& task : tasks.tasks()) {
    const int64_t role = task_roles.chain[task.id];
    if (task_index[role] >= 0) {
      ++orbits.orbit_size[task_index[role]];
      continue;
    }
    TaskDef copy;  // No name: a deadlock's message comes from the whole plan's simulation.
    copy.kind = task.kind;
    copy.device = task.device;
    copy.period = task.period;
    copy.firings = task.firings;
    task_index[role] = orbits.graph.AddTask(std::move(copy));
    orbits.orbit_size.push_back(1);
    orbits.first_task.push_back(task.id);
  }
  // Registers of each role, for the role's slots and readers.
  // Registers of each role (role r's are members[first[r] .. first[r + 1])), in id order.
  std::vector<int64_t> first(register_roles.count + 1, 0);
  for (const TaskRegister& reg : tasks.registers()) ++first[register_roles.chain[reg.id] + 1];
  for (int64_t role = 0; role < register_roles.count; ++role) first[role + 1] += first[role];
  std::vector<RegisterId> members(tasks.registers().size());
  {
    std::vector<int64_t> next(first.begin(), first.end() - 1);
    for (const TaskRegister& reg : tasks.registers()) {
      members[next[register_roles.chain[reg.id]]++] = reg.id;
    }
  }
  struct Entry {
    TaskId task;     // Orbit-graph task.
    int64_t offset;  // The register's position minus the reader's, mod replicas.
    int phase;
    RegisterId member;
    bool operator<(const Entry& other) const {
      return std::tie(task, offset, phase, member) <
             std::tie(other.task, other.offset, other.phase, other.member);
    }
  };
  std::vector<Entry> entries;
  for (int64_t role = 0; role < register_roles.count; ++role) {
    const TaskRegister& head = tasks.register_at(members[first[role]]);
    TaskRegister copy;
    copy.producer = task_index[task_roles.chain[head.producer]];
    copy.device = head.device;
    copy.period = head.period;
    copy.slots = head.slots;
    copy.bytes_per_slot = head.bytes_per_slot;
    entries.clear();
    for (int64_t k = first[role]; k < first[role + 1]; ++k) {
      const RegisterId member = members[k];
      const TaskRegister& reg = tasks.register_at(member);
      copy.slots = std::min(copy.slots, reg.slots);  // The fewest of the role: a stricter plan.
      for (const RegisterReader& reader : reg.readers) {
        // A tail task reading a core register stands for one copy per replica (at position 0).
        const bool tail_reader = symmetry.tail[reader.task] && !tail_register(reg);
        const int64_t reader_position = tail_reader ? 0 : task_roles.position[reader.task];
        const int64_t offset =
            tail_register(reg)
                ? 0
                : ((register_roles.position[member] - reader_position) % replicas + replicas) %
                      replicas;
        entries.push_back(
            {task_index[task_roles.chain[reader.task]], offset, reader.phase, member});
      }
    }
    const RegisterId index = orbits.graph.AddRegister(std::move(copy));
    orbits.first_register.push_back(head.id);
    // One reader entry per (task, offset, phase), as many times as the most any member has.
    std::sort(entries.begin(), entries.end());
    TaskId phase_one = -1;
    int phase_one_count = 0;
    for (size_t begin = 0; begin < entries.size();) {
      size_t end = begin;
      int64_t most = 0;
      while (end < entries.size() && entries[end].task == entries[begin].task &&
             entries[end].offset == entries[begin].offset &&
             entries[end].phase == entries[begin].phase) {
        size_t same = end;
        while (same < entries.size() && entries[same].task == entries[end].task &&
               entries[same].offset == entries[end].offset &&
               entries[same].phase == entries[end].phase &&
               entries[same].member == entries[end].member) {
          ++same;
        }
        most = std::max<int64_t>(most, static_cast<int64_t>(same - end));
        end = same;
      }
      for (int64_t k = 0; k < most; ++k) {
        orbits.graph.AddReader(index, entries[begin].task, entries[begin].phase);
      }
      if (entries[begin].phase == 1) {
        phase_one = entries[begin].task;
        phase_one_count += static_cast<int>(most);
      }
      begin = end;
    }
    const bool both_phases =
        phase_one >= 0 && std::any_of(entries.begin(), entries.end(), [&](const Entry& entry) {
          return entry.phase == 0 && entry.task == phase_one;
        });
    if (phase_one_count > 1 || both_phases) {
      *why_not = "register " + RegisterName(tasks, head.id) +
                 " would have its in-place writer twice, or read by it in both phases, in the "
                 "orbit graph";
      return std::nullopt;
    }
  }
  return orbits;
}

}  // namespace compiler
}  // namespace softwire
