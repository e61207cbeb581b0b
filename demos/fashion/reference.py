#!/usr/bin/python3
"""Trains the fashion job's network in PyTorch, as a reference for softwire's run of the job.

Usage: demos/fashion/reference.py [--job demos/fashion/fashion.pbtxt] [--data DIR] [--steps N]
                                  [--save DIR] [--metrics-out FILE] [--threads 2]
                                  [--precision float32|bf16]

The same network (network.py's ops, run with torch.nn.functional), the same initial values
(the job's initializers through the NumPy port of base/random.h), the same micro-batches (the
NpyDataset's seeded permutation, redrawn every epoch), the same Adam, and batch_norm as
softwire's: batch statistics in training, running statistics updated once per step with
momentum 0.1 and the unbiased variance (PyTorch's F.batch_norm(training=True)), and the same
schedule: the learning rate drops to config["decayed_learning_rate"] after
config["decay_step"] steps, as when fashion_decayed.pbtxt resumes fashion.pbtxt's checkpoint.
So step 0's loss equals softwire's to float32 rounding and later steps track it closely.

Writes the trained variables as DIR/<name>.npy (running statistics included) and one JSON line
per step to FILE, the layout `softwire run --save/--metrics-out` uses, so evaluate.py reads
either. `--precision bf16` runs the forward pass under torch.autocast("cpu", bfloat16), the
peer of `softwire run --precision bf16`. Needs python3-torch (scripts/install-deps
--with-peers).
"""

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import model  # noqa: E402
import network  # noqa: E402
import peer_training  # noqa: E402
import softwire_random  # noqa: E402


def job_batches(config, images, labels):
    """Yields (pixels, label) arrays of micro-batch 0, 1, ... as the job's NpyDataset reads
    them (seed config["data_seed"], shuffled)."""
    batch, count = config["batch"], len(labels)
    piece = 0
    while True:
        positions = np.arange(piece * batch, (piece + 1) * batch)
        samples = softwire_random.npy_samples(config["data_seed"], True, count, positions)
        yield images[samples], labels[samples]
        piece += 1


def build_forward(torch, config):
    """forward(parameters, pixels, labels) -> (loss, logits), mirroring model.forward in
    training mode (running statistics are updated in place)."""
    functional = torch.nn.functional
    _, ops = network.network(config)

    def forward(parameters, pixels, labels):
        values = dict(parameters)
        values["pixels"], values["label"] = pixels, labels
        for op in ops:
            inputs = [values[name] for name in op["inputs"]]
            kind, attrs = op["type"], op["attrs"]
            if kind == "conv2d":
                y = functional.conv2d(inputs[0], inputs[1], stride=attrs.get("strides", 1),
                                      padding=attrs.get("padding", 0))
            elif kind == "batch_norm":
                x, gamma, beta, running_mean, running_var = inputs
                y = functional.batch_norm(x, running_mean, running_var, gamma, beta,
                                          training=True, momentum=0.1, eps=model.EPSILON)
            elif kind == "relu":
                y = torch.relu(inputs[0])
            elif kind == "add" or kind == "bias_add":
                y = inputs[0] + inputs[1]
            elif kind == "global_avg_pool":
                y = inputs[0].mean(dim=(2, 3))
            elif kind == "matmul":
                y = inputs[0] @ inputs[1]
            elif kind == "softmax_cross_entropy":
                y = functional.cross_entropy(inputs[0].float(), inputs[1], reduction="none")
            elif kind == "reduce_mean":
                y = inputs[0].mean()
            elif kind == "accuracy":
                y = (inputs[0].argmax(dim=1) == inputs[1]).float().mean()
            else:
                raise ValueError(f"op {op['name']}: type {kind} has no PyTorch version here")
            values[op["output"]] = y
        return values["loss"], values["accuracy"]

    return forward


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--job", default=os.path.join(HERE, "fashion.pbtxt"))
    parser.add_argument("--data", help="prepare.py's folder (default: data/ beside the job)")
    parser.add_argument("--steps", type=int, help="default: the job's steps")
    parser.add_argument("--save", help="write the trained variables here as <name>.npy")
    parser.add_argument("--metrics-out", help="write one JSON line per step here")
    parser.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    parser.add_argument("--print-every", type=int, default=50)
    parser.add_argument("--precision", choices=("float32", "bf16"), default="float32",
                        help="bf16: forward and loss under torch.autocast (cpu, bfloat16)")
    arguments = parser.parse_args(argv)

    import torch
    torch.set_num_threads(arguments.threads)
    config = model.read_job_config(arguments.job)
    steps = arguments.steps or config["steps"]
    data = arguments.data or os.path.join(os.path.dirname(os.path.abspath(arguments.job)),
                                          "data")
    images = np.load(os.path.join(data, "train_x.npy"))
    labels = np.load(os.path.join(data, "train_y.npy")).astype(np.int64)
    variables, _ = network.network(config)
    initial = model.initial_variables(config)
    parameters = {v["name"]: torch.tensor(initial[v["name"]], requires_grad=not v["frozen"])
                  for v in variables}
    trained = [parameters[v["name"]] for v in variables if not v["frozen"]]
    optimizer = torch.optim.Adam(trained, lr=config["learning_rate"], betas=(0.9, 0.999),
                                 eps=1e-8)
    forward = build_forward(torch, config)
    batches = job_batches(config, images, labels)
    log = peer_training.StepLog(arguments.metrics_out, config["batch"], steps,
                                arguments.print_every)
    for step in range(1, steps + 1):
        if step == config["decay_step"] + 1:
            for group in optimizer.param_groups:
                group["lr"] = config["decayed_learning_rate"]
        pixels, label = (torch.from_numpy(a) for a in next(batches))
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=arguments.precision == "bf16"):
            loss, accuracy = forward(parameters, pixels, label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log.step(step, loss.item(), accuracy.item())
    log.close()
    if arguments.save:
        peer_training.save_variables(arguments.save, parameters)


if __name__ == "__main__":
    main(sys.argv[1:])
