#include "trace/trace_files.h"

#include <unistd.h>

#include <cstdio>

#include "base/file.h"
#include "trace/chrome_trace.h"
#include "trace/timeline_render.h"
#include "trace/trace_summary.h"

namespace softwire {
namespace trace {

Status CheckTraceOutput(const std::string& path, const std::string& flag) {
  if (path.empty()) return InvalidArgumentError(flag + ": no file given");
  const std::string probe = path + ".probe.tmp." + std::to_string(::getpid());
  if (!WriteFileAtomically(probe, "").ok()) {
    return InvalidArgumentError(flag + ": cannot write into '" + DirectoryOf(path) + "'");
  }
  std::remove(probe.c_str());
  return Status::Ok();
}

StatusOr<std::string> WriteTraceFiles(const std::string& path, const TraceLog& log) {
  SOFTWIRE_ASSIGN_OR_RETURN(TraceModel model, BuildTraceModel(log));
  const TraceSummary summary = Summarize(model);
  const std::string text = FormatSummary(model, summary);
  SOFTWIRE_RETURN_IF_ERROR(WriteChromeTrace(path, model));
  SOFTWIRE_RETURN_IF_ERROR(WriteFileAtomically(path + ".summary.txt", text));
  SOFTWIRE_RETURN_IF_ERROR(WriteFileAtomically(path + ".svg", RenderTimelineSvg(model, &summary)));
  return text;
}

}  // namespace trace
}  // namespace softwire
