// The JSON form of the plan facts a trace carries (otherData.plan of a Chrome trace file), and
// back: written by ExportChromeTrace, read by ParseChromeTrace.
#ifndef SOFTWIRE_TRACE_PLAN_FACTS_JSON_H_
#define SOFTWIRE_TRACE_PLAN_FACTS_JSON_H_

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "base/status.h"
#include "trace/plan_facts.h"

namespace softwire {
namespace trace {

std::string PlanFactsToJson(const PlanFacts& facts);

// DataLoss naming what is missing or inconsistent (CheckPlanFacts).
StatusOr<PlanFacts> PlanFactsFromJson(const nlohmann::ordered_json& value);

}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_PLAN_FACTS_JSON_H_
