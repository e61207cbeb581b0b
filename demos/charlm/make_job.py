#!/usr/bin/python3
"""Writes charlm.pbtxt: a byte-level GPT-style language model as a softwire job.

Usage: demos/charlm/make_job.py [--embed 128] [--context 64] [--heads 4] [--layers 2]
                                [--batch 32] [--micro-batches 1] [--steps 1000]
                                [--learning-rate 0.002] [--output demos/charlm/charlm.pbtxt]

A transformer has the same few ops in every block, with sizes repeated across many of them
(reshape shapes, the attention scale, variable dims). Generating the job keeps them consistent
when the sizes change. The first line of the job records the sizes as JSON; evaluate.py reads
it to rebuild the model.

The model (pre-norm GPT-2, without dropout, learned position embeddings, untied output layer):
    x = embedding(wte, ids) + wpe
    for each block:  x = x + attention(layer_norm(x));  x = x + mlp(layer_norm(x))
    logits = layer_norm(x) @ w_lm;  loss = mean(softmax_cross_entropy(logits, targets))
Only ops of docs/OPS.md are used.
"""

import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import job_text  # noqa: E402


class JobWriter:
    """Accumulates text-format job sections."""

    def __init__(self):
        self.lines = []

    def add(self, text=""):
        self.lines.append(text)

    def variable(self, name, dims, initializer):
        dims_text = ", ".join(str(d) for d in dims)
        self.add(f'variable {{ name: "{name}" dtype: DATA_TYPE_FLOAT32 dims: [{dims_text}] '
                 f"initializer {{ {initializer} }} }}")

    def op(self, name, op_type, inputs, output, **attrs):
        parts = [f'name: "{name}"', f'type: "{op_type}"']
        parts += [f'input: "{i}"' for i in inputs]
        parts.append(f'output: "{output}"')
        parts += [job_text.attr_text(attr_name, value) for attr_name, value in attrs.items()]
        self.add("op { " + " ".join(parts) + " }")

    def text(self):
        return "\n".join(self.lines) + "\n"


def normal(stddev, seed):
    return f"normal {{ mean: 0 stddev: {stddev!r} seed: {seed} }}"


def constant(value):
    return f"constant {{ value: {value} }}"


def variables(job, config):
    """Every variable with GPT-2's initialisation: N(0, 0.02), residual projections scaled by
    1/sqrt(2 * layers), layer norms at gamma 1, beta 0, biases 0. Each random variable has its
    own seed."""
    c, t, layers = config["embed"], config["context"], config["layers"]
    residual_stddev = 0.02 / math.sqrt(2 * layers)
    seeds = iter(range(1, 1000))
    job.add("# Token and position embeddings.")
    job.variable("wte", [256, c], normal(0.02, next(seeds)))
    job.variable("wpe", [t, c], normal(0.01, next(seeds)))
    for block in range(layers):
        p = f"block{block}_"
        job.add(f"# Block {block}: attention and MLP weights.")
        job.variable(p + "ln1_gamma", [c], constant(1))
        job.variable(p + "ln1_beta", [c], constant(0))
        for name in ("wq", "wk", "wv"):
            job.variable(p + name, [c, c], normal(0.02, next(seeds)))
        job.variable(p + "wo", [c, c], normal(residual_stddev, next(seeds)))
        job.variable(p + "ln2_gamma", [c], constant(1))
        job.variable(p + "ln2_beta", [c], constant(0))
        job.variable(p + "wfc", [c, 4 * c], normal(0.02, next(seeds)))
        job.variable(p + "bfc", [4 * c], constant(0))
        job.variable(p + "wproj", [4 * c, c], normal(residual_stddev, next(seeds)))
        job.variable(p + "bproj", [c], constant(0))
    job.add("# Final layer norm and the output layer (logits over the 256 byte values).")
    job.variable("lnf_gamma", [c], constant(1))
    job.variable("lnf_beta", [c], constant(0))
    job.variable("w_lm", [c, 256], normal(0.02, next(seeds)))


def block_ops(job, config, block, x):
    """Ops of one pre-norm transformer block reading `x` [B, T, C]; returns its output name."""
    c, t, heads = config["embed"], config["context"], config["heads"]
    d = c // heads
    p = f"block{block}_"
    job.add(f"# Block {block}, attention: heads of size {d}, causal softmax.")
    job.op(p + "ln1", "layer_norm", [x, p + "ln1_gamma", p + "ln1_beta"], p + "ln1")
    for name in ("q", "k", "v"):
        job.op(p + name, "matmul", [p + "ln1", p + "w" + name], p + name)
        job.op(p + name + "_split", "reshape", [p + name], p + name + "_split",
               shape=[-1, t, heads, d])
        job.op(p + name + "_heads", "transpose", [p + name + "_split"], p + name + "_heads",
               perm=[0, 2, 1, 3])
    job.op(p + "scores", "batch_matmul", [p + "q_heads", p + "k_heads"], p + "scores",
           transpose_b=True)
    job.op(p + "scores_scaled", "scale", [p + "scores"], p + "scores_scaled",
           factor=1.0 / math.sqrt(d))
    job.op(p + "attention", "softmax", [p + "scores_scaled"], p + "attention", causal=True)
    job.op(p + "context_heads", "batch_matmul", [p + "attention", p + "v_heads"],
           p + "context_heads")
    job.op(p + "context_merge", "transpose", [p + "context_heads"], p + "context_merge",
           perm=[0, 2, 1, 3])
    job.op(p + "context", "reshape", [p + "context_merge"], p + "context", shape=[-1, t, c])
    job.op(p + "attention_out", "matmul", [p + "context", p + "wo"], p + "attention_out")
    job.op(p + "residual1", "add", [x, p + "attention_out"], p + "residual1")
    job.add(f"# Block {block}, MLP: {c} -> {4 * c} -> {c} with GELU.")
    job.op(p + "ln2", "layer_norm", [p + "residual1", p + "ln2_gamma", p + "ln2_beta"],
           p + "ln2")
    job.op(p + "fc", "matmul", [p + "ln2", p + "wfc"], p + "fc")
    job.op(p + "fc_bias", "bias_add", [p + "fc", p + "bfc"], p + "fc_bias")
    job.op(p + "gelu", "gelu", [p + "fc_bias"], p + "gelu")
    job.op(p + "proj", "matmul", [p + "gelu", p + "wproj"], p + "proj")
    job.op(p + "proj_bias", "bias_add", [p + "proj", p + "bproj"], p + "proj_bias")
    job.op(p + "residual2", "add", [p + "residual1", p + "proj_bias"], p + "residual2")
    return p + "residual2"


def make_job(config):
    c, t = config["embed"], config["context"]
    if c % config["heads"] != 0:
        raise ValueError("--embed must be a multiple of --heads")
    job = JobWriter()
    job.add("# charlm: " + json.dumps(config, sort_keys=True))
    job.add("# Generated by demos/charlm/make_job.py; edit the sizes there and regenerate.")
    job.add("# A byte-level GPT-style language model trained on the Debian license texts.")
    job.add("# Data: demos/charlm/prepare.py writes data/licenses.txt beside this file.")
    job.add('name: "charlm"')
    job.add("")
    job.add("# Windows of `context` bytes; `targets` is the same window shifted by one byte.")
    job.add("# The last tenth of the file is held out for evaluate.py.")
    job.add("source {")
    job.add('  name: "text"')
    job.add(f'  output {{ name: "ids" dtype: DATA_TYPE_INT32 sample_dims: [{t}] }}')
    job.add(f'  output {{ name: "targets" dtype: DATA_TYPE_INT32 sample_dims: [{t}] }}')
    job.add(f'  text {{ path: "data/licenses.txt" context: {t} seed: {config["data_seed"]} '
            f'train_fraction: {config["train_fraction"]!r} }}')
    job.add("}")
    job.add("")
    variables(job, config)
    job.add("")
    job.add("# Embeddings: token vectors plus a learned vector per position (broadcast over B).")
    job.op("token_embedding", "embedding", ["wte", "ids"], "token_embedding")
    job.op("embedded", "add", ["token_embedding", "wpe"], "embedded")
    x = "embedded"
    for block in range(config["layers"]):
        x = block_ops(job, config, block, x)
    job.add("# Output: logits over 256 byte values, cross-entropy against the next byte.")
    job.op("lnf", "layer_norm", [x, "lnf_gamma", "lnf_beta"], "lnf")
    job.op("logits", "matmul", ["lnf", "w_lm"], "logits")
    job.op("token_loss", "softmax_cross_entropy", ["logits", "targets"], "token_loss")
    job.op("loss", "reduce_mean", ["token_loss"], "loss")
    job.op("accuracy", "accuracy", ["logits", "targets"], "accuracy")
    job.add('metric: "accuracy"')
    job.add("")
    job.add("train {")
    job.add('  loss: "loss"')
    job.add(f'  optimizer {{ adam {{ learning_rate: {config["learning_rate"]!r} '
            f"beta1: 0.9 beta2: 0.99 }} }}")
    job.add(f'  steps: {config["steps"]}')
    micro_batches = config.get("micro_batches", 1)
    job.add(f'  micro_batch_size: {config["batch"] // micro_batches}')
    if micro_batches > 1:
        job.add(f"  micro_batches_per_step: {micro_batches}")
    job.add("}")
    return job.text()


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embed", type=int, default=128, help="model width C")
    parser.add_argument("--context", type=int, default=64, help="window length T")
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32, help="windows per step")
    parser.add_argument("--micro-batches", type=int, default=1,
                        help="split each step's windows into this many micro-batches (pipelined "
                             "through the stages; their gradients averaged into one step)")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--learning-rate", type=float, default=0.002)
    parser.add_argument("--train-fraction", type=float, default=0.9)
    parser.add_argument("--data-seed", type=int, default=1)
    parser.add_argument("--output", default=os.path.join(HERE, "charlm.pbtxt"))
    return parser.parse_args(argv)


def main(argv):
    arguments = parse_arguments(argv)
    config = {
        "embed": arguments.embed, "context": arguments.context, "heads": arguments.heads,
        "layers": arguments.layers, "batch": arguments.batch, "steps": arguments.steps,
        "learning_rate": arguments.learning_rate, "train_fraction": arguments.train_fraction,
        "data_seed": arguments.data_seed,
    }
    if arguments.micro_batches < 1 or arguments.batch % arguments.micro_batches != 0:
        sys.exit(f"--micro-batches {arguments.micro_batches} must divide --batch {arguments.batch}")
    if arguments.micro_batches > 1:
        config["micro_batches"] = arguments.micro_batches
    text = make_job(config)
    with open(arguments.output, "w") as output:
        output.write(text)
    print(f"wrote {arguments.output}")


if __name__ == "__main__":
    main(sys.argv[1:])
