#include "bench/dataplane/fill_timeline.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace softwire {
namespace bench {
namespace {

double MedianUs(std::vector<int64_t> ns) {
  if (ns.empty()) return 0;
  std::sort(ns.begin(), ns.end());
  return static_cast<double>(ns[ns.size() / 2]) / 1e3;
}

// The firings of `actor`, by firing index.
std::map<int64_t, trace::TraceEvent> FiringsOf(const std::vector<trace::TraceEvent>& events,
                                               int32_t actor) {
  std::map<int64_t, trace::TraceEvent> firings;
  for (const trace::TraceEvent& event : events) {
    if (event.type == trace::EventType::kFiring && event.actor == actor) {
      firings[event.index] = event;
    }
  }
  return firings;
}

}  // namespace

std::string FiringLine(const trace::TraceEvent& event) {
  std::ostringstream line;
  line << "firing " << event.actor << " " << event.index << " " << event.launch << " "
       << event.start << " " << event.end << " " << static_cast<int>(event.cause) << " "
       << event.peer;
  return line.str();
}

trace::TraceEvent ParseFiringLine(const std::string& line) {
  std::istringstream in(line);
  std::string word;
  int cause = 0;
  trace::TraceEvent event{};
  in >> word >> event.actor >> event.index >> event.launch >> event.start >> event.end >> cause >>
      event.peer;
  CHECK(in && word == "firing") << "not a firing line: '" << line << "'";
  event.type = trace::EventType::kFiring;
  event.cause = static_cast<trace::CauseKind>(cause);
  return event;
}

FillTimeline AnalyseFills(const std::vector<trace::TraceEvent>& sender,
                          const std::vector<trace::TraceEvent>& receiver, int32_t send,
                          int32_t recv) {
  const std::map<int64_t, trace::TraceEvent> sends = FiringsOf(sender, send);
  const std::map<int64_t, trace::TraceEvent> recvs = FiringsOf(receiver, recv);
  FillTimeline timeline;
  timeline.fills = static_cast<int64_t>(sends.size());
  std::vector<int64_t> write, gap, period, transit, recv_period;
  const trace::TraceEvent* previous = nullptr;
  for (const auto& [index, firing] : sends) {
    switch (firing.cause) {
      case trace::CauseKind::kInput:
        ++timeline.send_after_input;
        break;
      case trace::CauseKind::kSlot:
        ++timeline.send_after_release;
        break;
      case trace::CauseKind::kPreviousFiring:
        ++timeline.send_after_previous;
        break;
      default:
        break;
    }
    write.push_back(firing.end - firing.start);
    if (previous != nullptr) {
      gap.push_back(firing.start - previous->end);
      period.push_back(firing.start - previous->start);
    }
    previous = &firing;
    auto received = recvs.find(index);
    if (received != recvs.end()) transit.push_back(received->second.launch - firing.end);
  }
  const trace::TraceEvent* last = nullptr;
  for (const auto& [index, firing] : recvs) {
    if (last != nullptr) recv_period.push_back(firing.start - last->start);
    last = &firing;
  }
  timeline.send_write_us = MedianUs(write);
  timeline.send_gap_us = MedianUs(gap);
  timeline.send_period_us = MedianUs(period);
  timeline.ready_transit_us = MedianUs(transit);
  timeline.recv_period_us = MedianUs(recv_period);
  return timeline;
}

std::string Describe(const FillTimeline& timeline) {
  char text[500];
  std::snprintf(text, sizeof(text),
                "fills %lld; send launched after input/release/previous %lld/%lld/%lld; "
                "write %.1f us, gap %.1f us, period %.1f us; Ready across %.1f us; "
                "recv period %.1f us; per fill: cpu sender %.1f us, receiver %.1f us; context "
                "switches sender %.1f, receiver %.1f",
                static_cast<long long>(timeline.fills),
                static_cast<long long>(timeline.send_after_input),
                static_cast<long long>(timeline.send_after_release),
                static_cast<long long>(timeline.send_after_previous), timeline.send_write_us,
                timeline.send_gap_us, timeline.send_period_us, timeline.ready_transit_us,
                timeline.recv_period_us, timeline.sender_cpu_us, timeline.receiver_cpu_us,
                timeline.sender_switches, timeline.receiver_switches);
  return text;
}

}  // namespace bench
}  // namespace softwire
