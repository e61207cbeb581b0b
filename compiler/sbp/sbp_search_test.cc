// The sbp search on small graphs whose optimum an exhaustive enumeration finds: a chain where
// the greedy choice is myopic, a join, hints as hard constraints, and a caller's filter.
#include "compiler/sbp/sbp_search.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "compiler/sbp/sbp_solvers.h"
#include "compiler/testing/compiler_test_util.h"
#include "placement/cluster_spec.h"

namespace softwire {
namespace compiler {
namespace {

CompileOptions TensorParallel(int tp, int dp = 1) {
  CompileOptions options;
  options.cluster = *placement::ParseClusterShorthand(std::to_string(tp * dp) + "cpu", 8);
  options.parallel.set_tensor_parallel(tp);
  options.parallel.set_data_parallel(dp);
  return options;
}

// The least SbpProblem::Evaluate over every assignment of the ops with a choice.
double ExhaustiveOptimum(SbpProblem& problem) {
  std::vector<OpId> free;
  double assignments = 1;
  for (OpId id : problem.order()) {
    const SbpOpKind kind = problem.entry(id).kind;
    if (kind != SbpOpKind::kChoice && kind != SbpOpKind::kVariable) continue;
    free.push_back(id);
    assignments *= static_cast<double>(problem.candidates(id).size());
  }
  CHECK_LE(assignments, 2e6) << "too many assignments to enumerate";
  SbpAssignment assignment(problem.graph().op_count(), 0);
  double best = std::numeric_limits<double>::infinity();
  std::function<void(size_t)> visit = [&](size_t index) {
    if (index == free.size()) {
      best = std::min(best, problem.Evaluate(assignment));
      return;
    }
    const int count = static_cast<int>(problem.candidates(free[index]).size());
    for (int j = 0; j < count; ++j) {
      assignment[free[index]] = j;
      visit(index + 1);
    }
  };
  visit(0);
  return best;
}

struct Solved {
  double greedy = 0;
  double global = 0;
  double optimum = 0;
};

Solved Solve(const std::string& job, const CompileOptions& options) {
  StagedCompilation staged(job, options);
  Status status = staged.RunThrough("partition_stages");
  CHECK(status.ok()) << status;
  StatusOr<std::unique_ptr<SbpProblem>> problem =
      SbpProblem::Build(staged.compilation(), SbpFilter());
  CHECK(problem.ok()) << problem.status();
  Solved solved;
  const SbpAssignment greedy = SolveGreedy(**problem);
  solved.greedy = (*problem)->Evaluate(greedy);
  solved.global = (*problem)->Evaluate(SolveGlobal(**problem, greedy));
  solved.optimum = ExhaustiveOptimum(**problem);
  return solved;
}

bool Near(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

// x [1, 64] -> matmul by w [64, 64] -> softmax -> reduce_sum. On tp 2 the greedy matmul
// splits w's columns (half the product; the variable takes that layout for free, as nothing
// trains it), and the softmax, which needs whole rows, then has to gather them back across the
// devices (a transfer's latency and the gather's actors); computing the whole small product on
// every device costs a little more there and nothing after.
const char kMyopicChain[] = R"job(
name: "myopic_chain"
source {
  name: "data"
  output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: [64] }
  synthetic { seed: 1 }
}
variable { name: "w" dtype: DATA_TYPE_FLOAT32 dims: [64, 64]
           initializer { normal { stddev: 0.1 seed: 1 } } }
op { name: "product" type: "matmul" input: ["x", "w"] output: "y" }
op { name: "soft" type: "softmax" input: "y" output: "p" }
op { name: "total" type: "reduce_sum" input: "p" output: "sum" }
metric: "sum"
steps: 1
micro_batch_size: 1
)job";

TEST(SbpSearchTest, ChainReachesTheExhaustiveOptimumWhereGreedyIsMyopic) {
  const Solved solved = Solve(kMyopicChain, TensorParallel(2));
  EXPECT_TRUE(Near(solved.global, solved.optimum)) << solved.global << " vs " << solved.optimum;
  EXPECT_GT(solved.greedy, solved.optimum * (1 + 1e-6))
      << "greedy " << solved.greedy << " optimum " << solved.optimum;
}

// A branch and a join: x feeds two element-wise paths that an add joins.
const char kJoin[] = R"job(
name: "join"
source {
  name: "data"
  output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: [256] }
  synthetic { seed: 1 }
}
variable { name: "w" dtype: DATA_TYPE_FLOAT32 dims: [256, 256] initializer { normal { stddev: 0.1 seed: 2 } } }
op { name: "left" type: "matmul" input: ["x", "w"] output: "l" }
op { name: "right" type: "relu" input: "x" output: "r" }
op { name: "both" type: "add" input: ["l", "r"] output: "j" }
op { name: "soft" type: "softmax" input: "j" output: "p" }
op { name: "total" type: "reduce_sum" input: "p" output: "sum" }
metric: "sum"
steps: 1
micro_batch_size: 8
)job";

TEST(SbpSearchTest, JoinReachesTheExhaustiveOptimumAndNeverLosesToGreedy) {
  for (int tp : {2, 4}) {
    const Solved solved = Solve(kJoin, TensorParallel(tp));
    EXPECT_TRUE(Near(solved.global, solved.optimum))
        << "tp " << tp << ": " << solved.global << " vs " << solved.optimum;
    EXPECT_LE(solved.global, solved.greedy * (1 + 1e-12)) << "tp " << tp;
  }
}

TEST(SbpSearchTest, HintsStayHardConstraints) {
  {
    // Unhinted, the search keeps the product's rows whole on tp.
    StagedCompilation staged(kMyopicChain, TensorParallel(2));
    ASSERT_TRUE(staged.RunThrough("choose_sbp").ok());
    EXPECT_NE(placement::NdSbpToString(staged.op("product").placement.outputs[0]), "(B, S(1))");
  }
  std::string job = kMyopicChain;
  // Force the myopic layout: split the product's output on its last axis.
  const std::string plain =
      R"job(op { name: "product" type: "matmul" input: ["x", "w"] output: "y" })job";
  job.replace(
      job.find(plain), plain.size(),
      R"job(op { name: "product" type: "matmul" input: ["x", "w"] output: "y" attr { name: "sbp" string: "S(1)" } })job");
  StagedCompilation staged(job, TensorParallel(2));
  ASSERT_TRUE(staged.RunThrough("choose_sbp").ok());
  const LogicalOp& product = staged.op("product");
  EXPECT_EQ(placement::NdSbpToString(product.placement.outputs[0]), "(B, S(1))");
  EXPECT_LE(staged.compilation().sbp_search.chosen_seconds,
            staged.compilation().sbp_search.greedy_seconds * (1 + 1e-12));
}

TEST(SbpSearchTest, FilterConstrainsTheChoiceAndAnEmptyChoiceNamesTheOp) {
  StagedCompilation staged(kJoin, TensorParallel(2));
  ASSERT_TRUE(staged.RunThrough("choose_sbp").ok());
  SbpSearchOptions options;
  // No op may split anything: every layout replicated or partial.
  options.filter = [](const LogicalOp&, const SbpCandidate& candidate) {
    for (const auto* layouts : {&candidate.inputs, &candidate.outputs}) {
      for (const placement::NdSbp& sbp : *layouts) {
        if (!placement::SplitAxes(sbp).empty()) return false;
      }
    }
    return true;
  };
  ASSERT_TRUE(ChooseSbp(staged.compilation(), options).ok());
  for (const char* name : {"left", "right", "both", "soft"}) {
    for (const placement::NdSbp& sbp : staged.op(name).placement.outputs) {
      EXPECT_TRUE(placement::SplitAxes(sbp).empty())
          << name << " " << placement::NdSbpToString(sbp);
    }
  }
  options.filter = [](const LogicalOp& op, const SbpCandidate&) { return op.name != "soft"; };
  Status status = ChooseSbp(staged.compilation(), options);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("op 'soft'"), std::string::npos) << status;
}

TEST(SbpSearchTest, GreedyOptionKeepsTheGreedyChoice) {
  CompileOptions options = TensorParallel(2);
  options.sbp_search = SbpSearchMethod::kGreedy;
  StagedCompilation staged(kMyopicChain, options);
  ASSERT_TRUE(staged.RunThrough("choose_sbp").ok());
  const SbpSearchReport& report = staged.compilation().sbp_search;
  EXPECT_EQ(report.method, "greedy");
  EXPECT_EQ(report.chosen_seconds, report.greedy_seconds);
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
