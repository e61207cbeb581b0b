
 # A two-layer perceptron that reads handwritten digits (8x8 pixels, 10 classes).
# Data: demos/digits/prepare.py writes data/*.npy beside this file; every path in a job is
# relative to the job file's directory. docs/JOB_FORMAT.md walks through this file.
name: "digits"

# The source: one .npy file per output, axis 0 indexes samples. Each micro-batch takes the
# next micro_batch_size samples of a permutation of the 1438 training images, redrawn every
# epoch.
source {
  name: "digits"
  output { name: "pixels" dtype: DATA_TYPE_FLOAT32 sample_dims: [64] }
  output { name: "label" dtype: DATA_TYPE_INT32 }
  npy {
    path: "data/train_x.npy"
    path: "data/train_y.npy"
    shuffle: true
    seed: 7
  }
}

# Parameters. He initialisation for the ReLU layer: stddev sqrt(2 / fan_in).
variable {
  name: "w1"
  dtype: DATA_TYPE_FLOAT32
  dims: [64, 128]
  initializer { normal { mean: 0 stddev: 0.177 seed: 1 } }
}
variable {
  name: "b1"
  dtype: DATA_TYPE_FLOAT32
  dims: [128]
  initializer { constant { value: 0 } }
}
variable {
  name: "w2"
  dtype: DATA_TYPE_FLOAT32
  dims: [128, 10]
  initializer { normal { mean: 0 stddev: 0.125 seed: 2 } }
}
variable {
  name: "b2"
  dtype: DATA_TYPE_FLOAT32
  dims: [10]
  initializer { constant { value: 0 } }
}

# The forward graph: pixels [B, 64] -> hidden [B, 128] -> logits [B, 10] -> loss (scalar).
op { name: "fc1" type: "matmul" input: "pixels" input: "w1" output: "fc1" }
op { name: "fc1_bias" type: "bias_add" input: "fc1" input: "b1" output: "fc1_bias" }
op { name: "hidden" type: "relu" input: "fc1_bias" output: "hidden" }
op { name: "fc2" type: "matmul" input: "hidden" input: "w2" output: "fc2" }
op { name: "logits" type: "bias_add" input: "fc2" input: "b2" output: "logits" }
op {
  name: "cross_entropy"
  type: "softmax_cross_entropy"
  input: "logits"
  input: "label"
  output: "cross_entropy"
}
op { name: "loss" type: "reduce_mean" input: "cross_entropy" output: "loss" }
op { name: "accuracy" type: "accuracy" input: "logits" input: "label" output: "accuracy" }

# Reported every step besides the loss: the fraction of the step's images classified right.
metric: "accuracy"

# 400 steps of 32 images: about 9 passes over the training images.
train {
  loss: "loss"
  optimizer { sgd { learning_rate: 0.05 momentum: 0.9 } }
  steps: 400
  micro_batch_size: 32
}
"
data/train_x.npyx"
../escape.npyy