#!/usr/bin/python3
"""CTest cnn_matches_torch_test: softwire trains tests/compiler/jobs/cnn.pbtxt (conv2d,
batch_norm, max_pool2d, global_avg_pool) to the per-step losses PyTorch float32 computes for
the same network from the same initial values on the same batches, within 1e-5 relative over
20 steps.

Both start from bit-identical float32 weights and batches: demos/common/softwire_random.py
reproduces the job's initializers and its synthetic source (data/synthetic_dataset.h). What
differs is the order of float32 sums (oneDNN's and PyTorch's convolutions, batch statistics
summed in double by softwire): ~1e-7 relative per step, which SGD does not amplify over 20
steps (measured: a few 1e-7). A wrong gradient or statistic moves the loss by far more.

PyTorch runs in training mode like softwire's batch_norm (batch statistics, biased variance in
the normalisation), max pooling as softwire's. The running statistics softwire keeps
(running_mean1, running_var1, saved with --save) are checked against the same fold computed here
in float64: each step, (1 - 0.1) running + 0.1 * the mean over the step's two micro-batches of
their batch mean and unbiased variance (with one micro-batch per step this is PyTorch's own
update; with several, PyTorch folds each in turn). Two micro-batches per step: their gradients are
averaged, the step's loss is their mean (docs/JOB_FORMAT.md). SGD with momentum as
torch.optim.SGD (v = m v + g; w -= lr v).

Exits 77 (skipped) when PyTorch is missing (scripts/install-deps --with-peers installs it).
Usage: cnn_matches_torch.py --softwire build/cli/softwire
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "demos", "common"))
import softwire_metrics  # noqa: E402
import softwire_random  # noqa: E402

JOB = os.path.join(ROOT, "tests", "compiler", "jobs", "cnn.pbtxt")
STEPS = 20
TOLERANCE = 1e-5
MOMENTUM = 0.1  # batch_norm's default.


def read_job():
    """Variables (name -> initial float32 array), the source's seed and sample dims, and the
    training settings, from the job text."""
    text = open(JOB).read()
    variables = {}
    for line in text.splitlines():
        match = re.match(r'variable \{ name: "(\w+)" .* dims: \[?([\d, ]+)\]? initializer \{ '
                         r'(\w+) \{ ([^}]*) \} \} \}', line)
        if not match:
            continue
        name, dims, kind, fields = match.groups()
        shape = [int(d) for d in dims.split(",")]
        values = {key: float(value) for key, value in re.findall(r"(\w+): ([-\d.e]+)", fields)}
        if "seed" in values:
            values["seed"] = int(values["seed"])
        variables[name] = softwire_random.initial_value({kind: values}, shape)
    seed = int(re.search(r"synthetic \{ seed: (\d+) int_high: (\d+)", text).group(1))
    classes = int(re.search(r"int_high: (\d+)", text).group(1))
    sample_dims = [int(d) for d in re.search(r"sample_dims: \[([\d, ]+)\]", text).group(1).split(",")]
    train = {key: float(re.search(key + r": ([\d.]+)", text).group(1))
             for key in ("learning_rate", "momentum", "micro_batch_size", "micro_batches_per_step")}
    return variables, seed, classes, sample_dims, train


def micro_batch(seed, classes, sample_dims, size, piece):
    """The synthetic source's micro-batch `piece` (data/synthetic_dataset.h)."""
    elements = int(np.prod(sample_dims))
    samples = np.arange(piece * size, (piece + 1) * size, dtype=np.uint64)
    x_indices = (samples[:, None] * np.uint64(elements) + np.arange(elements, dtype=np.uint64)).ravel()
    x_seed = int(softwire_random.hash_counter(seed, [0])[0])
    label_seed = int(softwire_random.hash_counter(seed, [1])[0])
    x = softwire_random.normal_at(x_seed, x_indices).astype(np.float32).reshape([size] + sample_dims)
    labels = softwire_random.uniform_int_at(label_seed, samples, classes)
    return x, labels


def torch_losses(torch):
    functional = torch.nn.functional
    variables, seed, classes, sample_dims, train = read_job()
    parameters = {name: torch.tensor(value, requires_grad=True) for name, value in variables.items()}
    optimizer = torch.optim.SGD(parameters.values(), lr=train["learning_rate"],
                                momentum=train["momentum"])
    p = parameters
    size = int(train["micro_batch_size"])
    pieces = int(train["micro_batches_per_step"])
    losses = []
    running_mean = torch.zeros(p["gamma1"].shape[0], dtype=torch.float64)
    running_var = torch.ones(p["gamma1"].shape[0], dtype=torch.float64)
    for step in range(STEPS):
        optimizer.zero_grad()
        step_loss = 0.0
        step_mean = torch.zeros_like(running_mean)
        step_var = torch.zeros_like(running_var)
        for k in range(pieces):
            x, labels = micro_batch(seed, classes, sample_dims, size, step * pieces + k)
            x = torch.from_numpy(x)
            h = functional.conv2d(x, p["w1"], p["b1"], padding=1)
            with torch.no_grad():  # softwire's running statistics: the step's mean of pieces'.
                step_mean += h.double().mean(dim=(0, 2, 3)) / pieces
                step_var += h.double().var(dim=(0, 2, 3), unbiased=True) / pieces
            h = functional.batch_norm(h, None, None, p["gamma1"], p["beta1"], training=True,
                                      eps=1e-5)
            h = functional.max_pool2d(functional.relu(h), 2)
            h = functional.relu(functional.conv2d(h, p["w2"], padding=1))
            features = h.mean(dim=(2, 3))
            logits = features @ p["w3"] + p["b3"]
            loss = functional.cross_entropy(logits, torch.from_numpy(labels))
            (loss / pieces).backward()
            step_loss += loss.item() / pieces
        optimizer.step()
        losses.append(step_loss)
        running_mean = (1 - MOMENTUM) * running_mean + MOMENTUM * step_mean
        running_var = (1 - MOMENTUM) * running_var + MOMENTUM * step_var
    return losses, {"running_mean1": running_mean.numpy(), "running_var1": running_var.numpy()}


def softwire_run(binary):
    """Per-step losses and the running statistics after the last step."""
    with tempfile.TemporaryDirectory() as directory:
        metrics = os.path.join(directory, "metrics.json")
        saved = os.path.join(directory, "variables")
        subprocess.run([binary, "run", JOB, "--steps", str(STEPS), "--metrics-out", metrics,
                        "--save", saved], check=True, stdout=subprocess.DEVNULL, timeout=120)
        statistics = {name: np.load(os.path.join(saved, name + ".npy"))
                      for name in ("running_mean1", "running_var1")}
        return [loss for _, loss in softwire_metrics.read_losses(metrics)], statistics


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--softwire", required=True, help="the softwire binary")
    arguments = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed (scripts/install-deps --with-peers): skipped")
        return 77
    torch.set_num_threads(1)
    expected, expected_statistics = torch_losses(torch)
    actual, statistics = softwire_run(arguments.softwire)
    if len(actual) != STEPS:
        print(f"softwire reported {len(actual)} steps, expected {STEPS}")
        return 1
    worst = 0.0
    failed = False
    for step, (mine, theirs) in enumerate(zip(actual, expected)):
        relative = abs(mine - theirs) / abs(theirs)
        worst = max(worst, relative)
        if relative > TOLERANCE:
            failed = True
            print(f"step {step}: softwire {mine:.9f}, PyTorch {theirs:.9f}, relative {relative:.2e}")
    for name, value in statistics.items():
        # Statistics of activations that match to ~1e-7 relative, folded in float32: 1e-5
        # relative plus 1e-6 absolute (running means are near 0, ~1e-3).
        expected_value = expected_statistics[name]
        difference = np.max(np.abs(value - expected_value))
        print(f"{name}: worst absolute difference {difference:.2e}")
        if not np.all(np.abs(value - expected_value) <= 1e-6 + TOLERANCE * np.abs(expected_value)):
            failed = True
            print(f"{name}: softwire {value}, expected {expected_statistics[name]}")
    print(f"{STEPS} steps, worst relative difference {worst:.2e} (tolerance {TOLERANCE:.0e}); "
          f"losses {expected[0]:.6f} -> {expected[-1]:.6f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
