// CheckChromeTrace: checks the rules a trace file promises (chrome_trace.h) on any Chrome
// Trace Event Format text, independently of the writer: the text is JSON with a traceEvents
// array; every X event has numeric ts and dur >= 0; X slices on one (pid, tid) nest (each
// either ends before the next starts or contains it); every flow id has exactly one start (s)
// and one end (f), each inside an X slice of its own thread; C events have numeric args.
//
// Used by the tests and by `softwire trace check FILE`.
#ifndef SOFTWIRE_TRACE_CHROME_TRACE_CHECK_H_
#define SOFTWIRE_TRACE_CHROME_TRACE_CHECK_H_

#include <cstdint>
#include <string>

#include "base/status.h"

namespace softwire {
namespace trace {

struct ChromeTraceCounts {
  int64_t complete_events = 0;  // X
  int64_t counter_events = 0;   // C
  int64_t flows = 0;            // s/f pairs
  int64_t metadata_events = 0;  // M
};

// OK and the counts, or FailedPrecondition naming the first event that breaks a rule.
StatusOr<ChromeTraceCounts> CheckChromeTrace(const std::string& text);

}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_CHROME_TRACE_CHECK_H_
