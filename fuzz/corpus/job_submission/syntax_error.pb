
¶# A list that is never closed.
# expect: syntax_error.pbtxt:13:
# expect: Expected
name: "bad"
source {
  name: "data"
  output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: 16 }
  output { name: "labels" dtype: DATA_TYPE_INT32 }
  synthetic { seed: 1 int_high: 4 }
}
variable { name: "w1" dtype: DATA_TYPE_FLOAT32 dims: [16, 32] initializer { normal { stddev: 0.1 seed: 1 } } }
variable { name: "w2" dtype: DATA_TYPE_FLOAT32 dims: [32, 4] initializer { normal { stddev: 0.1 seed: 2 } } }
op { name: "fc1" type: "matmul" input: ["x", "w1" output: "h" }
op { name: "relu" type: "relu" input: "h" output: "a" }
op { name: "fc2" type: "matmul" input: ["a", "w2"] output: "logits" }
op { name: "xent" type: "softmax_cross_entropy" input: ["logits", "labels"] output: "losses" }
op { name: "mean" type: "reduce_mean" input: "losses" output: "loss" }
train {
  loss: "loss"
  optimizer { sgd { learning_rate: 0.1 } }
  steps: 2
  micro_batch_size: 8
}
