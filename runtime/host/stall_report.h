// What each unfinished actor waits for, in words: the stall watchdog's report (and later the
// answer of live diagnosis).
//
//   actor 'consumer' (compute) at firing 0: starved: needs fill 0 of register 'x' from
//     actor 'producer'
//   actor 'producer' (source) at firing 2: blocked: no free slot in register 'x'; fill 0 is
//     still held by actor 'consumer'
#ifndef SOFTWIRE_RUNTIME_HOST_STALL_REPORT_H_
#define SOFTWIRE_RUNTIME_HOST_STALL_REPORT_H_

#include <string>

#include "proto/plan.pb.h"
#include "runtime/host/host_messages.h"

namespace softwire {
namespace runtime {

// One line for one actor's report. Names come from `plan`; ids it does not know print as
// numbers.
std::string DescribeWaitReport(const proto::Plan& plan, const WaitReport& report);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_STALL_REPORT_H_
