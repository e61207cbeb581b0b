// Where a recorded trace is written: `softwire run --trace FILE`, `softwire simulate --trace
// FILE`, and a served job's results (service/, FILE = results/trace.json):
//
//   FILE               the trace, Chrome Trace Event Format (Perfetto, chrome://tracing)
//   FILE.summary.txt   `softwire trace summary FILE`, written beside it
//   FILE.svg           `softwire trace render FILE -o FILE.svg`, written beside it
//
// Every file is written atomically (a temporary, then a rename): a failure leaves no
// half-written file.
#ifndef SOFTWIRE_TRACE_TRACE_FILES_H_
#define SOFTWIRE_TRACE_TRACE_FILES_H_

#include <string>

#include "base/status.h"
#include "trace/trace_model.h"

namespace softwire {
namespace trace {

// Fails before a long run, not after it: InvalidArgument naming the flag when `path`'s folder
// cannot be written.
Status CheckTraceOutput(const std::string& path, const std::string& flag);

// Analyses `log` and writes the three files. Returns the summary's text.
StatusOr<std::string> WriteTraceFiles(const std::string& path, const TraceLog& log);

}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_TRACE_FILES_H_
