// WaitStateSignal: `kill -USR1 <pid>` of `softwire run` prints which actors wait on what, to
// stderr, without stopping the job.
//
// A SignalThread (signal_thread.h) takes the signal; its thread, "sw:diagnose", asks the job
// (LoadedPlan::DescribeWaits, the actors answer between two of their messages) on a normal thread.
// The report has the format of the stall watchdog's.
//
//   StatusOr<std::unique_ptr<WaitStateSignal>> signal = WaitStateSignal::Install(
//       [&] { return loaded->DescribeWaits(std::chrono::seconds(1)) ... text ...; });
//   ... run ...;  // destroying it restores the previous SIGUSR1 disposition.
//
// Threading: at most one installed at a time per process (a signal handler can only reach
// process-wide state); Install fails with FailedPrecondition otherwise.
#ifndef SOFTWIRE_CLI_LIVE_DIAGNOSIS_H_
#define SOFTWIRE_CLI_LIVE_DIAGNOSIS_H_

#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "cli/signal_thread.h"

namespace softwire {
namespace cli {

class WaitStateSignal {
 public:
  // `report` builds the text to print; it runs on the reporting thread.
  static StatusOr<std::unique_ptr<WaitStateSignal>> Install(std::function<std::string()> report);
  ~WaitStateSignal();
  WaitStateSignal(const WaitStateSignal&) = delete;
  WaitStateSignal& operator=(const WaitStateSignal&) = delete;

 private:
  WaitStateSignal() = default;

  std::function<std::string()> report_;
  std::unique_ptr<SignalThread> thread_;  // Last: it calls report_.
};

}  // namespace cli
}  // namespace softwire

#endif  // SOFTWIRE_CLI_LIVE_DIAGNOSIS_H_
