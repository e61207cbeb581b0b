#!/usr/bin/python3
"""The MLP bench job in PyTorch, one JSON line per step: the spread benchmark's MLP peer.

Usage: bench/spread/pytorch_mlp_steps.py [--steps 60] --metrics-out FILE

The model, data and optimizer of bench/training/pytorch_mlp.py (MLP 784-1024-1024-10, batch
256, SGD momentum 0.9, one synthetic batch), timed step by step in the layout of
`softwire run --metrics-out` ({"step", "loss", "samples_per_second", "seconds"}). Thread
settings come from the environment (torch's intra-op threads from OMP_NUM_THREADS, OpenBLAS's
from OPENBLAS_NUM_THREADS), as spread_bench.py sets them.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "training"))

import pytorch_mlp  # noqa: E402


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--metrics-out", required=True)
    arguments = parser.parse_args(argv)
    import torch
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    torch.manual_seed(0)
    step = pytorch_mlp.build_step(torch)
    with open(arguments.metrics_out, "w") as metrics:
        for index in range(arguments.steps):
            started = time.perf_counter()
            loss = step().item()
            seconds = time.perf_counter() - started
            metrics.write(json.dumps({"step": index, "loss": loss, "seconds": seconds,
                                      "samples_per_second": pytorch_mlp.BATCH / seconds}) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
