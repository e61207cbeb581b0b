// Where `softwire run --trace FILE` (and any command that records a trace) puts it:
//
//   FILE               the trace, Chrome Trace Event Format (Perfetto, chrome://tracing)
//   FILE.summary.txt   `softwire trace summary FILE`, written beside it
//   FILE.svg           `softwire trace render FILE -o FILE.svg`, written beside it
//
// Every file is written atomically (a temporary, then a rename): a failure leaves no
// half-written file.
#ifndef SOFTWIRE_CLI_TRACE_FILES_H_
#define SOFTWIRE_CLI_TRACE_FILES_H_

#include <string>

#include "base/status.h"
#include "trace/trace_model.h"

namespace softwire {
namespace cli {

// Fails before a long run, not after it: InvalidArgument naming the flag when `path`'s folder
// cannot be written.
Status CheckTraceOutput(const std::string& path, const std::string& flag);

// Analyses `log` and writes the three files. Returns the summary's text.
StatusOr<std::string> WriteTraceFiles(const std::string& path, const trace::TraceLog& log);

}  // namespace cli
}  // namespace softwire

#endif  // SOFTWIRE_CLI_TRACE_FILES_H_
