
¢
# A two-layer MLP with biases, SGD with momentum, two micro-batches per step, and a metric.
name: "mlp_tiny"
source {
  name: "data"
  output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: 8 }
  output { name: "labels" dtype: DATA_TYPE_INT32 }
  synthetic { seed: 5 int_high: 3 }
}
variable { name: "w1" dtype: DATA_TYPE_FLOAT32 dims: [8, 16] initializer { normal { stddev: 0.1 seed: 1 } } }
variable { name: "b1" dtype: DATA_TYPE_FLOAT32 dims: 16 initializer { constant { value: 0 } } }
variable { name: "w2" dtype: DATA_TYPE_FLOAT32 dims: [16, 3] initializer { uniform { low: -0.1 high: 0.1 seed: 2 } } }
op { name: "fc1" type: "matmul" input: ["x", "w1"] output: "h1" }
op { name: "fc1_bias" type: "bias_add" input: ["h1", "b1"] output: "z1" }
op { name: "relu1" type: "relu" input: "z1" output: "a1" }
op { name: "fc2" type: "matmul" input: ["a1", "w2"] output: "logits" }
op { name: "xent" type: "softmax_cross_entropy" input: ["logits", "labels"] output: "losses" }
op { name: "mean_loss" type: "reduce_mean" input: "losses" output: "loss" }
op { name: "accuracy" type: "accuracy" input: ["logits", "labels"] output: "hits" }
metric: "hits"
train {
  loss: "loss"
  optimizer { sgd { learning_rate: 0.1 momentum: 0.9 weight_decay: 0.0001 } }
  steps: 3
  micro_batch_size: 4
  micro_batches_per_step: 2
}
* H2key-1