#include "bench/precision/actor_kernel.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "base/random.h"
#include "cli/flag_parser.h"
#include "proto/tensor_desc.h"

namespace softwire {
namespace runtime {

std::optional<KernelBenchFlags> ParseKernelBenchFlags(int argc, char** argv, const char* name,
                                                      int64_t default_steps,
                                                      const char* steps_help) {
  KernelBenchFlags parsed_flags;
  parsed_flags.steps = default_steps;
  cli::FlagParser flags;
  flags.AddString("precision", &parsed_flags.precision, "P", "float32 or bf16");
  flags.AddInt("steps", &parsed_flags.steps, "N", steps_help);
  flags.AddInt("threads", &parsed_flags.threads, "N", "threads of the kernels' pool");
  std::vector<std::string> positional;
  const Status parsed = flags.Parse(std::vector<std::string>(argv + 1, argv + argc), &positional);
  if (!parsed.ok() || positional.size() != 1 || parsed_flags.steps < 1 ||
      parsed_flags.threads < 1 ||
      (parsed_flags.precision != "float32" && parsed_flags.precision != "bf16")) {
    std::fprintf(stderr, "%s\nusage: %s JOB [flags]\n%s",
                 (parsed.ok() ? std::string("one JOB; --precision float32 or bf16; --steps and "
                                            "--threads at least 1")
                              : parsed.ToString())
                     .c_str(),
                 name, flags.Help().c_str());
    return std::nullopt;
  }
  parsed_flags.job_path = positional[0];
  parsed_flags.type =
      parsed_flags.precision == "bf16" ? proto::PRECISION_BF16 : proto::PRECISION_FLOAT32;
  return parsed_flags;
}

HostTensor RandomTensor(const proto::TensorDesc& desc, uint64_t seed) {
  const Shape shape = ShapeOf(desc);
  std::vector<float> values(static_cast<size_t>(shape.NumElements()));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = 0.5f * static_cast<float>(NormalAt(seed, i));
  }
  if (DTypeOf(desc) == DType::kBFloat16) return HostTensor::BFloat16s(shape, values);
  return HostTensor::Float(shape, std::move(values));
}

ActorKernel PrepareActorKernel(const proto::Plan& plan, const proto::ActorDef& actor,
                               const KernelRegistry& registry, ParallelRunner* runner,
                               uint64_t* seed) {
  std::vector<HostTensor> inputs;
  for (const proto::TensorDesc& input : actor.kernel().input()) {
    inputs.push_back(RandomTensor(input, (*seed)++));
  }
  std::vector<HostTensor> outputs;
  for (const proto::TensorDesc& output : actor.kernel().output()) {
    outputs.push_back(HostTensor::Zeros(DTypeOf(output), ShapeOf(output)));
  }
  std::vector<proto::Attribute> attributes(actor.kernel().attr().begin(),
                                           actor.kernel().attr().end());
  auto harness = std::make_unique<KernelHarness>(actor.kernel().op_type(), attributes,
                                                 std::move(inputs), std::move(outputs));
  const Status created = harness->Create(registry);
  CHECK(created.ok()) << actor.name() << ": " << created;
  harness->PrepareContext(runner);
  const int64_t pieces = std::max<int64_t>(1, plan.schedule().pieces_per_step());
  return {std::move(harness), pieces / std::max<int64_t>(1, actor.period())};
}

double StepSeconds(std::vector<ActorKernel>& kernels) {
  const auto begin = std::chrono::steady_clock::now();
  for (ActorKernel& kernel : kernels) {
    for (int64_t firing = 0; firing < kernel.firings_per_step; ++firing) {
      const Status status = kernel.harness->RunPrepared();
      CHECK(status.ok()) << status;
    }
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace runtime
}  // namespace softwire
