
»S# A 2-layer GPT-style decoder trained with Adam on synthetic tokens: token embedding plus a
# learned position embedding (broadcast over the batch), pre-norm blocks of causal multi-head
# self-attention and a gelu MLP with residual adds, a final layer_norm, and logits through the
# tied token embedding. Vocabulary 64, context 16, width 32, 4 heads of 8, MLP width 128.
# Shared by the compiler's tests and the end-to-end suites.
name: "transformer"

source {
  name: "data"
  output { name: "tokens" dtype: DATA_TYPE_INT32 sample_dims: 16 }
  output { name: "targets" dtype: DATA_TYPE_INT32 sample_dims: 16 }
  synthetic { seed: 11 int_high: 64 }
}

variable {
  name: "wte"
  dtype: DATA_TYPE_FLOAT32
  dims: [64, 32]
  initializer { normal { stddev: 0.02 seed: 101 } }
}
variable {
  name: "wpe"
  dtype: DATA_TYPE_FLOAT32
  dims: [16, 32]
  initializer { normal { stddev: 0.01 seed: 102 } }
}
variable {
  name: "h0.ln1_gamma"
  dtype: DATA_TYPE_FLOAT32
  dims: [32]
  initializer { constant { value: 1 } }
}
variable {
  name: "h0.ln1_beta"
  dtype: DATA_TYPE_FLOAT32
  dims: [32]
  initializer { constant { value: 0 } }
}
variable {
  name: "h0.wq"
  dtype: DATA_TYPE_FLOAT32
  dims: [32, 32]
  initializer { normal { stddev: 0.02 seed: 103 } }
}
variable {
  name: "h0.wk"
  dtype: DATA_TYPE_FLOAT32
  dims: [32, 32]
  initializer { normal { stddev: 0.02 seed: 104 } }
}
variable {
  name: "h0.wv"
  dtype: DATA_TYPE_FLOAT32
  dims: [32, 32]
  initializer { normal { stddev: 0.02 seed: 105 } }
}
variable {
  name: "h0.wo"
  dtype: DATA_TYPE_FLOAT32
  dims: [32, 32]
  initializer { normal { stddev: 0.02 seed: 106 } }
}
variable {
  name: "h0.ln2_gamma"
  dtype: DATA_TYPE_FLOAT32
  dims: [32]
  initializer { constant { value: 1 } }
}
variable {
  name: "h0.ln2_beta"
  dtype: DATA_TYPE_FLOAT32
  dims: [32]
  initializer { constant { value: 0 } }
}
variable {
  name: "h0.w_fc"
  dtype: DATA_TYPE_FLOAT32
  dims: [32, 128]
  initializer { normal { stddev: 0.02 seed: 107 } }
}
variable {
  name: "h0.b_fc"
  dtype: DATA_TYPE_FLOAT32
  dims: [128]
  initializer { constant { value: 0 } }
}
variable {
  name: "h0.w_proj"
  dtype: DATA_TYPE_FLOAT32
  dims: [128, 32]
  initializer { normal { stddev: 0.02 seed: 108 } }
}
variable {
  name: "h0.b_proj"
  dtype: DATA_TYPE_FLOAT32
  dims: [32]
  initializer { constant { value: 0 } }
}
variable {
  name: "h1.ln1_gamma"
  dtype: DATA_TYPE_FLOAT32
  dims: [32]
  initializer { constant { value: 1 } }
}
variable {
  name: "h1.ln1_beta"
  dtype: DATA_TYPE_FLOAT32
  dims: [32]
  initializer { constant { value: 0 } }
}
variable {
  name: "h1.wq"
  dtype: DATA_TYPE_FLOAT32
  dims: [32, 32]
  initializer { normal { stddev: 0.02 seed: 109 } }
}
variable {
  name: "h1.wk"
  dtype: DATA_TYPE_FLOAT32
  dims: [32, 32]
  initializer { normal { stddev: 0.02 seed: 110 } }
}
variable {
  name: "h1.wv"
  dtype: DATA_TYPE_FLOAT32
  dims: [32, 32]
  initializer { normal { stddev: 0.02 seed: 111 } }
}
variable {
  name: "h1.wo"
  dtype: DATA_TYPE_FLOAT32
  dims: [32, 32]
  initializer { normal { stddev: 0.02 seed: 112 } }
}
variable {
  name: "h1.ln2_gamma"
  dtype: DATA_TYPE_FLOAT32
  dims: [32]
  initializer { constant { value: 1 } }
}
variable {
  name: "h1.ln2_beta"
  dtype: DATA_TYPE_FLOAT32
  dims: [32]
  initializer { constant { value: 0 } }
}
variable {
  name: "h1.w_fc"
  dtype: DATA_TYPE_FLOAT32
  dims: [32, 128]
  initializer { normal { stddev: 0.02 seed: 113 } }
}
variable {
  name: "h1.b_fc"
  dtype: DATA_TYPE_FLOAT32
  dims: [128]
  initializer { constant { value: 0 } }
}
variable {
  name: "h1.w_proj"
  dtype: DATA_TYPE_FLOAT32
  dims: [128, 32]
  initializer { normal { stddev: 0.02 seed: 114 } }
}
variable {
  name: "h1.b_proj"
  dtype: DATA_TYPE_FLOAT32
  dims: [32]
  initializer { constant { value: 0 } }
}
variable {
  name: "ln_f.gamma"
  dtype: DATA_TYPE_FLOAT32
  dims: [32]
  initializer { constant { value: 1 } }
}
variable {
  name: "ln_f.beta"
  dtype: DATA_TYPE_FLOAT32
  dims: [32]
  initializer { constant { value: 0 } }
}

# Embeddings: tokens [B, T] -> [B, T, C], plus positions [T, C] broadcast over B.
op { name: "token_embedding" type: "embedding" input: ["wte", "tokens"] output: "token_vectors" }
op { name: "add_positions" type: "add" input: ["token_vectors", "wpe"] output: "h0.in" }

# Block 0: x + attention(layer_norm(x)), then + mlp(layer_norm(.)).
op { name: "h0.ln1" type: "layer_norm" input: ["h0.in", "h0.ln1_gamma", "h0.ln1_beta"] output: "h0.ln1_out" }
op { name: "h0.q" type: "matmul" input: ["h0.ln1_out", "h0.wq"] output: "h0.q" }
op { name: "h0.q_split" type: "reshape" input: ["h0.q"] output: "h0.q_split" attr { name: "shape" ints { value: [-1, 16, 4, 8] } } }
op { name: "h0.q_heads" type: "transpose" input: ["h0.q_split"] output: "h0.q_heads" attr { name: "perm" ints { value: [0, 2, 1, 3] } } }
op { name: "h0.k" type: "matmul" input: ["h0.ln1_out", "h0.wk"] output: "h0.k" }
op { name: "h0.k_split" type: "reshape" input: ["h0.k"] output: "h0.k_split" attr { name: "shape" ints { value: [-1, 16, 4, 8] } } }
op { name: "h0.k_heads" type: "transpose" input: ["h0.k_split"] output: "h0.k_heads" attr { name: "perm" ints { value: [0, 2, 1, 3] } } }
op { name: "h0.v" type: "matmul" input: ["h0.ln1_out", "h0.wv"] output: "h0.v" }
op { name: "h0.v_split" type: "reshape" input: ["h0.v"] output: "h0.v_split" attr { name: "shape" ints { value: [-1, 16, 4, 8] } } }
op { name: "h0.v_heads" type: "transpose" input: ["h0.v_split"] output: "h0.v_heads" attr { name: "perm" ints { value: [0, 2, 1, 3] } } }
op { name: "h0.scores" type: "batch_matmul" input: ["h0.q_heads", "h0.k_heads"] output: "h0.scores" attr { name: "transpose_b" bool: true } }
op { name: "h0.scale" type: "scale" input: ["h0.scores"] output: "h0.scaled_scores" attr { name: "factor" float: 0.35355339 } }
op { name: "h0.softmax" type: "softmax" input: ["h0.scaled_scores"] output: "h0.probabilities" attr { name: "causal" bool: true } }
op { name: "h0.attend" type: "batch_matmul" input: ["h0.probabilities", "h0.v_heads"] output: "h0.attended" }
op { name: "h0.merge_heads" type: "transpose" input: ["h0.attended"] output: "h0.merged" attr { name: "perm" ints { value: [0, 2, 1, 3] } } }
op { name: "h0.merge" type: "reshape" input: ["h0.merged"] output: "h0.attention" attr { name: "shape" ints { value: [-1, 16, 32] } } }
op { name: "h0.out_proj" type: "matmul" input: ["h0.attention", "h0.wo"] output: "h0.attention_out" }
op { name: "h0.residual1" type: "add" input: ["h0.in", "h0.attention_out"] output: "h0.mid" }
op { name: "h0.ln2" type: "layer_norm" input: ["h0.mid", "h0.ln2_gamma", "h0.ln2_beta"] output: "h0.ln2_out" }
op { name: "h0.fc" type: "matmul" input: ["h0.ln2_out", "h0.w_fc"] output: "h0.fc" }
op { name: "h0.fc_bias" type: "bias_add" input: ["h0.fc", "h0.b_fc"] output: "h0.fc_biased" }
op { name: "h0.gelu" type: "gelu" input: ["h0.fc_biased"] output: "h0.fc_act" }
op { name: "h0.proj" type: "matmul" input: ["h0.fc_act", "h0.w_proj"] output: "h0.proj" }
op { name: "h0.proj_bias" type: "bias_add" input: ["h0.proj", "h0.b_proj"] output: "h0.mlp_out" }
op { name: "h0.residual2" type: "add" input: ["h0.mid", "h0.mlp_out"] output: "h1.in" }

# Block 1: x + attention(layer_norm(x)), then + mlp(layer_norm(.)).
op { name: "h1.ln1" type: "layer_norm" input: ["h1.in", "h1.ln1_gamma", "h1.ln1_beta"] output: "h1.ln1_out" }
op { name: "h1.q" type: "matmul" input: ["h1.ln1_out", "h1.wq"] output: "h1.q" }
op { name: "h1.q_split" type: "reshape" input: ["h1.q"] output: "h1.q_split" attr { name: "shape" ints { value: [-1, 16, 4, 8] } } }
op { name: "h1.q_heads" type: "transpose" input: ["h1.q_split"] output: "h1.q_heads" attr { name: "perm" ints { value: [0, 2, 1, 3] } } }
op { name: "h1.k" type: "matmul" input: ["h1.ln1_out", "h1.wk"] output: "h1.k" }
op { name: "h1.k_split" type: "reshape" input: ["h1.k"] output: "h1.k_split" attr { name: "shape" ints { value: [-1, 16, 4, 8] } } }
op { name: "h1.k_heads" type: "transpose" input: ["h1.k_split"] output: "h1.k_heads" attr { name: "perm" ints { value: [0, 2, 1, 3] } } }
op { name: "h1.v" type: "matmul" input: ["h1.ln1_out", "h1.wv"] output: "h1.v" }
op { name: "h1.v_split" type: "reshape" input: ["h1.v"] output: "h1.v_split" attr { name: "shape" ints { value: [-1, 16, 4, 8] } } }
op { name: "h1.v_heads" type: "transpose" input: ["h1.v_split"] output: "h1.v_heads" attr { name: "perm" ints { value: [0, 2, 1, 3] } } }
op { name: "h1.scores" type: "batch_matmul" input: ["h1.q_heads", "h1.k_heads"] output: "h1.scores" attr { name: "transpose_b" bool: true } }
op { name: "h1.scale" type: "scale" input: ["h1.scores"] output: "h1.scaled_scores" attr { name: "factor" float: 0.35355339 } }
op { name: "h1.softmax" type: "softmax" input: ["h1.scaled_scores"] output: "h1.probabilities" attr { name: "causal" bool: true } }
op { name: "h1.attend" type: "batch_matmul" input: ["h1.probabilities", "h1.v_heads"] output: "h1.attended" }
op { name: "h1.merge_heads" type: "transpose" input: ["h1.attended"] output: "h1.merged" attr { name: "perm" ints { value: [0, 2, 1, 3] } } }
op { name: "h1.merge" type: "reshape" input: ["h1.merged"] output: "h1.attention" attr { name: "shape" ints { value: [-1, 16, 32] } } }
op { name: "h1.out_proj" type: "matmul" input: ["h1.attention", "h1.wo"] output: "h1.attention_out" }
op { name: "h1.residual1" type: "add" input: ["h1.in", "h1.attention_out"] output: "h1.mid" }
op { name: "h1.ln2" type: "layer_norm" input: ["h1.mid", "h1.ln2_gamma", "h1.ln2_beta"] output: "h1.ln2_out" }
op { name: "h1.fc" type: "matmul" input: ["h1.ln2_out", "h1.w_fc"] output: "h1.fc" }
op { name: "h1.fc_bias" type: "bias_add" input: ["h1.fc", "h1.b_fc"] output: "h1.fc_biased" }
op { name: "h1.gelu" type: "gelu" input: ["h1.fc_biased"] output: "h1.fc_act" }
op { name: "h1.proj" type: "matmul" input: ["h1.fc_act", "h1.w_proj"] output: "h1.proj" }
op { name: "h1.proj_bias" type: "bias_add" input: ["h1.proj", "h1.b_proj"] output: "h1.mlp_out" }
op { name: "h1.residual2" type: "add" input: ["h1.mid", "h1.mlp_out"] output: "final.in" }

# Head: final layer_norm, logits through the tied token embedding, mean cross-entropy.
op { name: "ln_f" type: "layer_norm" input: ["final.in", "ln_f.gamma", "ln_f.beta"] output: "ln_f.out" }
op { name: "logits" type: "matmul" input: ["ln_f.out", "wte"] output: "logits" attr { name: "transpose_b" bool: true } }
op { name: "cross_entropy" type: "softmax_cross_entropy" input: ["logits", "targets"] output: "token_losses" }
op { name: "mean_loss" type: "reduce_mean" input: ["token_losses"] output: "loss" }

train {
  loss: "loss"
  optimizer { adam { learning_rate: 0.001 weight_decay: 0.01 } }
  steps: 4
  micro_batch_size: 4
  micro_batches_per_step: 2
}
*