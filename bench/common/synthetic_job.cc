#include "bench/common/synthetic_job.h"

#include <algorithm>
#include <string>
#include <vector>

namespace softwire {
namespace bench {
namespace {

void AddVariable(proto::Job* job, const std::string& name, std::vector<int64_t> dims,
                 bool ones = false) {
  proto::Variable* variable = job->add_variable();
  variable->set_name(name);
  variable->set_dtype(proto::DATA_TYPE_FLOAT32);
  for (int64_t d : dims) variable->add_dims(d);
  if (ones) {
    variable->mutable_initializer()->mutable_constant()->set_value(1);
  } else {
    variable->mutable_initializer()->mutable_normal()->set_stddev(0.02);
    variable->mutable_initializer()->mutable_normal()->set_seed(job->variable_size());
  }
}

void AddOp(proto::Job* job, const std::string& name, const std::string& type,
           std::vector<std::string> inputs, const std::string& output) {
  proto::Op* op = job->add_op();
  op->set_name(name);
  op->set_type(type);
  for (const std::string& input : inputs) op->add_input(input);
  op->add_output(output);
}

}  // namespace

proto::Job SyntheticJob(int ops, int64_t batch, int64_t width) {
  const int64_t classes = 16;
  proto::Job job;
  job.set_name("synthetic_" + std::to_string(ops));
  proto::DataSource* source = job.add_source();
  source->set_name("data");
  proto::SourceOutput* x = source->add_output();
  x->set_name("x");
  x->set_dtype(proto::DATA_TYPE_FLOAT32);
  x->add_sample_dims(width);
  proto::SourceOutput* labels = source->add_output();
  labels->set_name("labels");
  labels->set_dtype(proto::DATA_TYPE_INT32);
  source->mutable_synthetic()->set_seed(1);
  source->mutable_synthetic()->set_int_high(classes);

  AddVariable(&job, "w_in", {width, width});
  AddOp(&job, "input", "matmul", {"x", "w_in"}, "h0");
  const int blocks = std::max(1, (ops - 5) / 7);
  for (int b = 0; b < blocks; ++b) {
    const std::string p = "b" + std::to_string(b) + ".";
    const std::string in = "h" + std::to_string(b);
    AddVariable(&job, p + "gamma", {width}, true);
    AddVariable(&job, p + "beta", {width});
    AddVariable(&job, p + "w_up", {width, 4 * width});
    AddVariable(&job, p + "b_up", {4 * width});
    AddVariable(&job, p + "w_down", {4 * width, width});
    AddVariable(&job, p + "b_down", {width});
    AddOp(&job, p + "norm", "layer_norm", {in, p + "gamma", p + "beta"}, p + "normed");
    AddOp(&job, p + "up", "matmul", {p + "normed", p + "w_up"}, p + "up");
    AddOp(&job, p + "up_bias", "bias_add", {p + "up", p + "b_up"}, p + "up_biased");
    AddOp(&job, p + "act", "gelu", {p + "up_biased"}, p + "act");
    AddOp(&job, p + "down", "matmul", {p + "act", p + "w_down"}, p + "down");
    AddOp(&job, p + "down_bias", "bias_add", {p + "down", p + "b_down"}, p + "mlp");
    AddOp(&job, p + "residual", "add", {in, p + "mlp"}, "h" + std::to_string(b + 1));
  }
  AddVariable(&job, "w_head", {width, classes});
  AddOp(&job, "head", "matmul", {"h" + std::to_string(blocks), "w_head"}, "logits");
  AddOp(&job, "xent", "softmax_cross_entropy", {"logits", "labels"}, "losses");
  AddOp(&job, "mean_loss", "reduce_mean", {"losses"}, "loss");
  AddOp(&job, "accuracy", "accuracy", {"logits", "labels"}, "hits");
  job.add_metric("hits");
  proto::Training* train = job.mutable_train();
  train->set_loss("loss");
  train->mutable_optimizer()->mutable_adam()->set_learning_rate(1e-3);
  train->set_steps(2);
  train->set_micro_batch_size(batch);
  train->set_micro_batches_per_step(4);
  return job;
}

}  // namespace bench
}  // namespace softwire
