// What the writer (chrome_trace.cc) and the reader (chrome_trace_reader.cc) of softwire's Chrome
// trace files must agree on beyond the format itself: the otherData format tag, the names of
// the slot counter tracks, and the unit of ts and dur.
#ifndef SOFTWIRE_TRACE_CHROME_TRACE_FORMAT_H_
#define SOFTWIRE_TRACE_CHROME_TRACE_FORMAT_H_

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "trace/plan_facts.h"
#include "trace/trace_event.h"

namespace softwire {
namespace trace {

// otherData.format of every file we write; the reader refuses others.
inline constexpr char kFormat[] = "softwire-trace/1";

// The counter track of each register, in plan order: "slots x", or "slots x#3" when two
// registers share the name x.
inline std::vector<std::string> CounterNames(const PlanFacts& plan) {
  std::map<std::string, int> uses;
  for (const RegisterFacts& reg : plan.registers) ++uses[reg.name];
  std::vector<std::string> names;
  for (size_t i = 0; i < plan.registers.size(); ++i) {
    const std::string& name = plan.registers[i].name;
    names.push_back("slots " + name + (uses[name] > 1 ? "#" + std::to_string(i) : ""));
  }
  return names;
}

// ts and dur are microseconds with three decimals: back to whole nanoseconds.
inline TimeNs Nanos(double micros) {
  return static_cast<TimeNs>(std::llround(micros * 1000.0));
}

}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_CHROME_TRACE_FORMAT_H_
