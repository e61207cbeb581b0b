// Every kernel of the example jobs' plans for cuda devices is created by the cuda kernel
// registry, without a GPU: the charlm transformer (float32 and bf16, one device and data- and
// tensor-parallel on two), the digits MLP and the MLP bench job. A cuda kernel is made when a
// plan is loaded, so this is what loading them on a GPU would do first; each kernel's numbers
// are cuda_kernels_gpu_test's (on a GPU). Host work (source, variable, sink) is the cpu
// kernels themselves (host_staged_kernel.h), not created here: a source opens its data.
#include <gtest/gtest.h>

#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "placement/cluster_spec.h"
#include "runtime/kernels/cuda/cuda_kernels.h"

namespace softwire {
namespace {

struct JobCase {
  std::string path;
  std::string cluster;
  int data_parallel = 1;
  int tensor_parallel = 1;
  proto::Precision precision = proto::PRECISION_UNSPECIFIED;
};

std::string Describe(const JobCase& job) {
  return job.path + " on " + job.cluster + " (dp " + std::to_string(job.data_parallel) + ", tp " +
         std::to_string(job.tensor_parallel) +
         (job.precision == proto::PRECISION_BF16 ? ", bf16" : "") + ")";
}

proto::Plan CompileFor(const JobCase& job) {
  StatusOr<compiler::JobFile> file = compiler::ParseJobFile(job.path);
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  compiler::CompileOptions options;
  StatusOr<proto::Cluster> cluster = placement::ParseClusterShorthand(job.cluster, 8);
  EXPECT_TRUE(cluster.ok()) << cluster.status().ToString();
  options.cluster = *cluster;
  options.parallel.set_data_parallel(job.data_parallel);
  options.parallel.set_tensor_parallel(job.tensor_parallel);
  options.precision = job.precision;
  StatusOr<proto::Plan> plan = compiler::CompileJob(*file, options);
  EXPECT_TRUE(plan.ok()) << Describe(job) << ": " << plan.status().ToString();
  return plan.ok() ? *plan : proto::Plan();
}

TEST(CudaKernelsForJobs, EveryKernelOfTheExampleJobsOnCudaDevicesIsCreated) {
  runtime::KernelRegistry cuda;
  runtime::RegisterCudaKernels(&cuda);
  const std::set<std::string> host_work = {"source", "variable", "sink"};
  for (const JobCase& job :
       std::vector<JobCase>{{"demos/charlm/charlm.pbtxt", "1cuda"},
                            {"demos/charlm/charlm.pbtxt", "1cuda", 1, 1, proto::PRECISION_BF16},
                            {"demos/charlm/charlm.pbtxt", "2cuda", 2, 1},
                            {"demos/charlm/charlm.pbtxt", "2cuda", 1, 2},
                            {"demos/digits/digits.pbtxt", "1cuda"},
                            {"demos/digits/digits.pbtxt", "2cuda", 2, 1},
                            {"bench/training/mlp.pbtxt", "1cuda"}}) {
    const proto::Plan plan = CompileFor(job);
    ASSERT_GT(plan.actor_size(), 0) << Describe(job);
    std::set<std::string> created;
    for (const proto::ActorDef& actor : plan.actor()) {
      const std::string& op = actor.kernel().op_type();
      if (host_work.count(op) > 0) continue;
      runtime::KernelSetup setup;
      setup.plan = &plan;
      setup.actor = &actor;
      StatusOr<std::unique_ptr<runtime::Kernel>> kernel = cuda.Create(setup);
      EXPECT_TRUE(kernel.ok()) << Describe(job) << ": " << kernel.status().ToString();
      created.insert(op);
    }
    std::string ops;
    for (const std::string& op : created) ops += " " + op;
    std::cout << Describe(job) << ": " << created.size() << " op types created:" << ops << "\n";
  }
}

}  // namespace
}  // namespace softwire
