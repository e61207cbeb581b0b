#!/usr/bin/python3
"""Trains the charlm job's model in PyTorch, as a reference for softwire's run of the job.

Usage: demos/charlm/torch_reference.py [--job demos/charlm/charlm.pbtxt] [--steps N]
                                       [--save DIR] [--metrics-out FILE] [--threads 2]
                                       [--precision float32|bf16] [--device cpu|cuda]

Same model (model.py's names and shapes), same initial values (the job's initializers through
the NumPy port of base/random.h), same micro-batches (TextDataset's window offsets
UniformIntAt(seed, sample, usable - context)), same Adam. So softwire's per-step loss on the
job should track this one closely (float32 rounding and summation order differ), and the
loss this reaches after the job's steps is the figure to expect from the demo.

Writes the trained variables as DIR/<name>.npy and one JSON line per step to FILE, the layout
`softwire run --save/--metrics-out` uses, so evaluate.py reads either. `--precision bf16` runs
the forward pass and the loss under torch.autocast("cpu", bfloat16), PyTorch's mixed precision
(the peer of `softwire run --precision bf16`); its matmuls then run in oneDNN on torch's threads,
so give it 2 threads and OPENBLAS_NUM_THREADS=1. Needs python3-torch
(scripts/install-deps --with-peers). `--device cuda` trains on a GPU (the GPU machine's PyTorch:
the peer of `softwire run --cluster 1cuda`, bench/cuda/gpu_charlm_checks.sh), float32 with TF32
off, each step's loss and accuracy read back as the softwire run reports them.
"""

import argparse
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import model  # noqa: E402
import peer_training  # noqa: E402
import softwire_random  # noqa: E402


def job_batches(config, text, batch):
    """Yields (ids, targets) int64 arrays [batch, context] for piece 0, 1, ..."""
    usable = len(text)
    if config["train_fraction"] > 0:
        usable = int(math.floor(len(text) * config["train_fraction"]))
    t = config["context"]
    data = np.frombuffer(text[:usable], dtype=np.uint8).astype(np.int64)
    positions = np.arange(t + 1)
    piece = 0
    while True:
        samples = np.arange(piece * batch, (piece + 1) * batch)
        offsets = softwire_random.uniform_int_at(config["data_seed"], samples, usable - t)
        windows = data[offsets[:, None] + positions]
        yield windows[:, :-1], windows[:, 1:]
        piece += 1


def build_forward(torch, config):
    """The model as a function of a dict of parameters (mirrors model.logits)."""
    functional = torch.nn.functional
    c, heads = config["embed"], config["heads"]
    d = c // heads

    def forward(parameters, ids):
        b, t = ids.shape
        x = parameters["wte"][ids] + parameters["wpe"][:t]
        mask = torch.ones(t, t, dtype=torch.bool, device=ids.device).tril()
        for block in range(config["layers"]):
            p = f"block{block}_"
            a = functional.layer_norm(x, (c,), parameters[p + "ln1_gamma"],
                                      parameters[p + "ln1_beta"], eps=model.EPSILON)
            q, k, v = (
                (a @ parameters[p + n]).reshape(b, t, heads, d).transpose(1, 2)
                for n in ("wq", "wk", "wv"))
            scores = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(d))
            attention = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
            context = (attention @ v).transpose(1, 2).reshape(b, t, c)
            x = x + context @ parameters[p + "wo"]
            a = functional.layer_norm(x, (c,), parameters[p + "ln2_gamma"],
                                      parameters[p + "ln2_beta"], eps=model.EPSILON)
            hidden = functional.gelu(a @ parameters[p + "wfc"] + parameters[p + "bfc"],
                                     approximate="tanh")
            x = x + hidden @ parameters[p + "wproj"] + parameters[p + "bproj"]
        x = functional.layer_norm(x, (c,), parameters["lnf_gamma"], parameters["lnf_beta"],
                                  eps=model.EPSILON)
        return x @ parameters["w_lm"]

    return forward


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--job", default=os.path.join(HERE, "charlm.pbtxt"))
    parser.add_argument("--steps", type=int, help="default: the job's steps")
    parser.add_argument("--save", help="write the trained variables here as <name>.npy")
    parser.add_argument("--metrics-out", help="write one JSON line per step here")
    parser.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    parser.add_argument("--print-every", type=int, default=50)
    parser.add_argument("--precision", choices=("float32", "bf16"), default="float32",
                        help="bf16: forward and loss under torch.autocast (cpu, bfloat16)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    arguments = parser.parse_args(argv)

    import torch
    torch.set_num_threads(arguments.threads)
    config = model.read_job_config(arguments.job)
    steps = arguments.steps or config["steps"]
    text = open(config["text_path"], "rb").read()
    if arguments.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
    parameters = {name: torch.tensor(value, dtype=torch.float32, requires_grad=True,
                                     device=arguments.device)
                  for name, value in model.initial_variables(arguments.job, config).items()}
    optimizer = torch.optim.Adam(parameters.values(), lr=config["learning_rate"],
                                 betas=(0.9, 0.99), eps=1e-8)
    forward = build_forward(torch, config)
    batches = job_batches(config, text, config["batch"])
    log = peer_training.StepLog(arguments.metrics_out, config["batch"], steps,
                                arguments.print_every)
    for step in range(1, steps + 1):
        ids, targets = (torch.from_numpy(a).to(arguments.device) for a in next(batches))
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=arguments.precision == "bf16"):
            logits = forward(parameters, ids)
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 256),
                                                     targets.reshape(-1))
        accuracy = (logits.argmax(-1) == targets).float().mean().item()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log.step(step, loss.item(), accuracy)
    log.close()
    if arguments.save:
        peer_training.save_variables(arguments.save, parameters)


if __name__ == "__main__":
    main(sys.argv[1:])
