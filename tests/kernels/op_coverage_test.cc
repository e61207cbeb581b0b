// Every op type of docs/OPS.md has a cpu kernel and (except the actor kinds the interpreter runs
// itself) a reference kernel, and neither registry knows an op the page does not list.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "reference/kernels/reference_kernels.h"
#include "runtime/kernels/cpu/cpu_kernels.h"

namespace softwire {
namespace kernel_tests {
namespace {

// docs/OPS.md, in its order.
const std::vector<std::string> kUserOps = {"matmul",
                                           "batch_matmul",
                                           "add",
                                           "sub",
                                           "mul",
                                           "scale",
                                           "bias_add",
                                           "relu",
                                           "gelu",
                                           "softmax",
                                           "softmax_cross_entropy",
                                           "layer_norm",
                                           "reduce_sum",
                                           "reduce_mean",
                                           "reshape",
                                           "transpose",
                                           "embedding",
                                           "accuracy",
                                           "identity",
                                           "conv2d",
                                           "batch_norm",
                                           "max_pool2d",
                                           "avg_pool2d",
                                           "global_avg_pool",
                                           "flatten"};
const std::vector<std::string> kInternalOps = {"fill",
                                               "add_n",
                                               "sum_to_shape",
                                               "broadcast_axes",
                                               "bias_add_grad",
                                               "relu_grad",
                                               "gelu_grad",
                                               "softmax_grad",
                                               "softmax_cross_entropy_grad",
                                               "layer_norm_grad",
                                               "embedding_grad",
                                               "cast",
                                               "fused",
                                               "conv2d_grad_input",
                                               "conv2d_grad_filter",
                                               "batch_norm_grad",
                                               "max_pool2d_grad",
                                               "avg_pool2d_grad",
                                               "global_avg_pool_grad",
                                               "batch_norm_statistics",
                                               "reorder"};
const std::vector<std::string> kUpdateOps = {"sgd_update", "adam_update", "running_average_update"};
// "Transfer and boxing ops (many devices)".
const std::vector<std::string> kTransferOps = {"copy", "slice", "assemble", "flat_split",
                                               "flat_concat"};
// Run by the reference interpreter itself, so they have cpu kernels only.
const std::vector<std::string> kInterpreterActorKinds = {"source", "variable", "accumulate",
                                                         "sink"};

std::set<std::string> Union(const std::vector<std::vector<std::string>>& lists) {
  std::set<std::string> all;
  for (const auto& list : lists) all.insert(list.begin(), list.end());
  return all;
}

TEST(OpCoverage, EveryOpInOpsMdHasACpuKernelAndNoOtherIsRegistered) {
  runtime::KernelRegistry registry;
  runtime::RegisterCpuKernels(&registry);
  const std::set<std::string> expected =
      Union({kUserOps, kInternalOps, kUpdateOps, kTransferOps, kInterpreterActorKinds});
  for (const std::string& op_type : expected) {
    EXPECT_TRUE(registry.Contains(op_type)) << "no cpu kernel for " << op_type;
  }
  for (const std::string& op_type : registry.OpTypes()) {
    EXPECT_TRUE(expected.count(op_type)) << op_type << " is registered but not in docs/OPS.md";
  }
}

TEST(OpCoverage, EveryOpButTheInterpretersActorKindsHasAReferenceKernel) {
  const reference::ReferenceKernelTable table = reference::MakeReferenceKernels();
  const std::set<std::string> expected = Union({kUserOps, kInternalOps, kUpdateOps, kTransferOps});
  for (const std::string& op_type : expected) {
    EXPECT_TRUE(table.Contains(op_type)) << "no reference kernel for " << op_type;
  }
  for (const std::string& op_type : table.OpTypes()) {
    EXPECT_TRUE(expected.count(op_type)) << op_type << " has a reference kernel but is not in "
                                         << "docs/OPS.md (or is an interpreter actor kind)";
  }
}

}  // namespace
}  // namespace kernel_tests
}  // namespace softwire
