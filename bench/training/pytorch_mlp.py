#!/usr/bin/python3
"""PyTorch peer for softwire's MLP training benchmark (bench/training/mlp.pbtxt).

Usage: bench/training/pytorch_mlp.py [--settings all|fastest|T:B[,T:B...]] [--steps 40]
                                     [--repeats 5] [--warmup 10] [--precision float32|bf16]

Measures train steps of an MLP 784-1024-1024-10 (ReLU) on batches of 256 synthetic samples,
cross-entropy loss, SGD with momentum 0.9, in Debian's PyTorch 1.13 (python3-torch), and
prints one JSON object on stdout.

A setting T:B runs torch.set_num_threads(T) with OPENBLAS_NUM_THREADS=B. Debian's torch calls
OpenBLAS, which keeps its own thread pool, so both matter; each setting runs in a fresh
process because OpenBLAS reads its variable when it loads. "all" tries 1:2 (the fastest in
docs/MACHINE.md), 2:1, 2:2 and 1:1 and reports which was fastest; "fastest" runs 1:2 only.
`--precision bf16` runs the forward pass and the loss under torch.autocast("cpu", bfloat16), whose
matmuls run in oneDNN on torch's threads (2:1 is its fastest setting). Each setting: `warmup`
untimed steps, then `repeats` timed runs of `steps` steps; the figure is
the median run. FLOPs per step are 6 * batch * parameters (forward 2, backward 4).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

BATCH = 256
LAYERS = (784, 1024, 1024, 10)
PARAMETERS = sum(a * b + b for a, b in zip(LAYERS, LAYERS[1:]))  # 1,863,690
FLOPS_PER_STEP = 6 * BATCH * PARAMETERS
ALL_SETTINGS = [(1, 2), (2, 1), (2, 2), (1, 1)]


def build_step(torch, precision="float32"):
    """The model, one synthetic batch and the optimizer; returns step(), which trains one step
    and returns the loss tensor."""
    layers = []
    for a, b in zip(LAYERS, LAYERS[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_function = torch.nn.CrossEntropyLoss()
    x = torch.randn(BATCH, LAYERS[0])
    y = torch.randint(0, LAYERS[-1], (BATCH,))

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
            loss = loss_function(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    return step


def measure(torch_threads, steps, repeats, warmup, precision="float32"):
    """Runs in the worker process: samples/s of each timed run."""
    import torch
    torch.set_num_threads(torch_threads)
    torch.manual_seed(0)
    step = build_step(torch, precision)
    for _ in range(warmup):
        step()
    rates = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(steps):
            loss = step()
        loss.item()
        rates.append(steps * BATCH / (time.perf_counter() - started))
    return rates, torch.__version__


def run_setting(torch_threads, blas_threads, arguments):
    """Starts a worker process for one setting and returns its JSON result."""
    environment = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas_threads),
                       OMP_NUM_THREADS=str(torch_threads))
    command = [sys.executable, os.path.abspath(__file__), "--worker", str(torch_threads),
               "--steps", str(arguments.steps), "--repeats", str(arguments.repeats),
               "--warmup", str(arguments.warmup),
               "--precision", getattr(arguments, "precision", "float32")]
    output = subprocess.run(command, env=environment, check=True, capture_output=True,
                            text=True).stdout
    result = json.loads(output)
    result["openblas_threads"] = blas_threads
    return result


def parse_settings(text):
    if text == "all":
        return ALL_SETTINGS
    if text == "fastest":
        return ALL_SETTINGS[:1]
    settings = []
    for item in text.split(","):
        torch_threads, blas_threads = item.split(":")
        settings.append((int(torch_threads), int(blas_threads)))
    return settings


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--settings", default="all")
    parser.add_argument("--steps", type=int, default=40, help="steps per timed run")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per setting")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--precision", choices=("float32", "bf16"), default="float32")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)

    if arguments.worker is not None:
        rates, version = measure(arguments.worker, arguments.steps, arguments.repeats,
                                 arguments.warmup, arguments.precision)
        median = statistics.median(rates)
        print(json.dumps({
            "torch_threads": arguments.worker, "torch_version": version,
            "samples_per_second": round(median, 1),
            "runs": [round(rate, 1) for rate in rates],
            "gflops_per_second": round(median / BATCH * FLOPS_PER_STEP / 1e9, 1),
        }))
        return

    results = [run_setting(t, b, arguments) for t, b in parse_settings(arguments.settings)]
    fastest = max(results, key=lambda result: result["samples_per_second"])
    print(json.dumps({
        "benchmark": "mlp_784_1024_1024_10_batch256_sgd_momentum_train_step",
        "peer": "pytorch", "precision": arguments.precision,
        "torch_version": fastest["torch_version"],
        "batch": BATCH, "parameters": PARAMETERS, "flops_per_step": FLOPS_PER_STEP,
        "steps_per_run": arguments.steps, "runs_per_setting": arguments.repeats,
        "fastest": {key: fastest[key] for key in ("torch_threads", "openblas_threads",
                                                  "samples_per_second", "gflops_per_second")},
        "settings": results,
    }, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
