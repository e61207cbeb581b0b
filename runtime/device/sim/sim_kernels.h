// The kernels of `sim` devices: they compute nothing (a sim device's arena holds no memory,
// device_arena.h), because a sim launch is only its duration (sim_clock.h). A sink still
// reports each piece, as NaN, so that steps complete and are timed as in a real run; a sim run
// has no values to report. Every op type gets one, so any plan runs on sim devices.
#ifndef SOFTWIRE_RUNTIME_DEVICE_SIM_SIM_KERNELS_H_
#define SOFTWIRE_RUNTIME_DEVICE_SIM_SIM_KERNELS_H_

#include <memory>

#include "base/status.h"
#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {

// The sim kernel of setup.actor: a sink's report, else nothing. InvalidArgument for a sink
// without a reporter or an output name.
StatusOr<std::unique_ptr<Kernel>> CreateSimKernel(const KernelSetup& setup);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_SIM_SIM_KERNELS_H_
