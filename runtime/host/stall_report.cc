#include "runtime/host/stall_report.h"

#include <cctype>
#include <cstdio>

#include "actors/actor_protocol.h"
#include "plan/labels.h"

namespace softwire {
namespace runtime {
namespace {

bool KnownActor(const proto::Plan& plan, int64_t id) {
  return id >= 0 && id < plan.actor_size();
}

bool KnownRegister(const proto::Plan& plan, int64_t id) {
  return id >= 0 && id < plan.register_def_size();
}

std::string ActorName(const proto::Plan& plan, int64_t id) {
  if (!KnownActor(plan, id)) return "actor #" + std::to_string(id);
  return plan::ActorLabel(plan.actor(static_cast<int>(id)).name());
}

std::string RegisterName(const proto::Plan& plan, int64_t id) {
  if (!KnownRegister(plan, id)) return "register #" + std::to_string(id);
  return plan::RegisterLabel(plan.register_def(static_cast<int>(id)).name());
}

std::string ActorList(const proto::Plan& plan, const std::vector<int64_t>& ids) {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) text += i + 1 == ids.size() ? " and " : ", ";
    text += ActorName(plan, ids[i]);
  }
  return text.empty() ? "nobody" : text;
}

// "(piece 3)" or "(pieces 8..11)": the pieces `index` covers with period `period`.
std::string Pieces(int64_t index, int64_t period) {
  period = std::max<int64_t>(1, period);
  if (period == 1) return "(piece " + std::to_string(index) + ")";
  return "(pieces " + std::to_string(index * period) + ".." +
         std::to_string((index + 1) * period - 1) + ")";
}

std::string KindName(const proto::Plan& plan, int64_t actor) {
  if (!KnownActor(plan, actor)) return "?";
  std::string name = proto::ActorKind_Name(plan.actor(static_cast<int>(actor)).kind());
  const std::string prefix = "ACTOR_KIND_";
  if (name.compare(0, prefix.size(), prefix) == 0) name = name.substr(prefix.size());
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// The actor's identity: "actor 'a' (compute) on node0/cpu:0".
void FillIdentity(const proto::Plan& plan, int64_t actor, ActorWaitState* state) {
  state->actor = actor;
  state->kind = KindName(plan, actor);
  state->actor_name = KnownActor(plan, actor) ? plan.actor(static_cast<int>(actor)).name() : "";
  if (!KnownActor(plan, actor)) return;
  const int device = plan.actor(static_cast<int>(actor)).device();
  if (device >= 0 && device < plan.device_size()) {
    const proto::PlanDevice& plan_device = plan.device(device);
    state->node = plan_device.node();
    state->device = plan_device.node().empty() ? plan_device.name()
                                               : plan_device.node() + "/" + plan_device.name();
  }
}

std::string Identity(const proto::Plan& plan, const ActorWaitState& state) {
  std::string text = ActorName(plan, state.actor) + " (" + state.kind + ")";
  if (!state.device.empty()) text += " on " + state.device;
  return text;
}

}  // namespace

ActorWaitState DescribeActorWait(const proto::Plan& plan, const WaitReport& report) {
  using Kind = actors::WaitState::Kind;
  ActorWaitState state;
  FillIdentity(plan, report.actor, &state);
  state.state = report.kind;
  state.next_firing = report.next_firing;
  state.completed_firings = report.completed_firings;
  state.register_id = report.register_id;
  state.register_name = KnownRegister(plan, report.register_id)
                            ? plan.register_def(static_cast<int>(report.register_id)).name()
                            : "";
  state.sequence = report.sequence;
  state.waiting_on = report.waiting_on;
  for (int64_t id : report.waiting_on) {
    state.waiting_on_names.push_back(KnownActor(plan, id) ? plan.actor(static_cast<int>(id)).name()
                                                          : "#" + std::to_string(id));
  }
  const int64_t period =
      KnownActor(plan, report.actor) ? plan.actor(static_cast<int>(report.actor)).period() : 1;
  const int64_t register_period =
      KnownRegister(plan, report.register_id)
          ? plan.register_def(static_cast<int>(report.register_id)).period()
          : 1;
  const Kind kind = static_cast<Kind>(report.kind);
  std::string text = Identity(plan, state) + " at firing " + std::to_string(report.next_firing);
  if (kind != Kind::kDraining && kind != Kind::kFinished) {
    text += " " + Pieces(report.next_firing, period);
  }
  text += ": ";
  text += actors::WaitKindName(kind);
  const std::string fill =
      "fill " + std::to_string(report.sequence) + " " + Pieces(report.sequence, register_period);
  switch (kind) {
    case Kind::kRunning:
      text += ": its kernel is running or queued on its device";
      break;
    case Kind::kStarved:
      if (report.register_id >= 0) {
        text += ": needs " + fill + " of " + RegisterName(plan, report.register_id) + " from " +
                ActorList(plan, report.waiting_on);
      } else {
        text += ": not started";
      }
      break;
    case Kind::kBlocked:
      text += ": no free slot in " + RegisterName(plan, report.register_id) + "; " + fill +
              " is still held by " + ActorList(plan, report.waiting_on);
      break;
    case Kind::kDraining:
      text += ": all firings done";
      if (report.register_id >= 0) {
        text += "; waits on " + RegisterName(plan, report.register_id);
        if (!report.waiting_on.empty()) text += " for " + ActorList(plan, report.waiting_on);
      }
      break;
    case Kind::kFinished:
      break;
  }
  state.line = text;
  return state;
}

ActorWaitState DescribeSilentActor(const proto::Plan& plan, int64_t actor,
                                   int64_t completed_firings) {
  ActorWaitState state;
  FillIdentity(plan, actor, &state);
  state.answered = false;
  state.completed_firings = completed_firings;
  state.line = Identity(plan, state) + " after " + std::to_string(completed_firings) +
               " firings: did not answer (busy in a kernel, or its worker thread is blocked)";
  return state;
}

std::string DescribeWaitReport(const proto::Plan& plan, const WaitReport& report) {
  return DescribeActorWait(plan, report).line;
}

std::string JobWaitStates::Lines(int max_lines) const {
  std::string text;
  int listed = 0;
  for (const ActorWaitState& wait : waits) {
    if (listed == max_lines) {
      text += "\n  ... and " + std::to_string(waits.size() - static_cast<size_t>(listed)) + " more";
      break;
    }
    text += "\n  " + wait.line;
    ++listed;
  }
  return text;
}

std::string JobWaitStates::Text(int max_lines) const {
  char elapsed[32];
  std::snprintf(elapsed, sizeof(elapsed), "%.2f", elapsed_seconds);
  return "wait states of job '" + job_name + "' after " + elapsed +
         " s: " + std::to_string(unfinished) + " of " + std::to_string(actors) +
         " actors have not finished, " + std::to_string(completed_firings) +
         " firings completed:" + Lines(max_lines);
}

}  // namespace runtime
}  // namespace softwire
