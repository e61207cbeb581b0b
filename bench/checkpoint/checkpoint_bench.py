#!/usr/bin/python3
"""What checkpoints cost a running job: the same job with and without --checkpoint-every.

Usage: bench/checkpoint/checkpoint_bench.py [--softwire build/cli/softwire] [--repeats 5]
                                            [--steps 120] [--every 10] [--json FILE]

For the MLP benchmark (bench/training/mlp.pbtxt: 784-1024-1024-10, sgd with momentum, 14 MiB
per checkpoint), `--repeats` times, alternating so both see the same machine noise:
  - `softwire run JOB --steps N --metrics-out F` (the peer), and
  - the same with `--checkpoint-every E --checkpoint-dir D` (a fresh D each time).
Each run's time is the sum of its steps' seconds after the first five (the engine's own step
timing), so process start and the last save's wait are left out; the checkpointed run's steps
include every copy the update actors make and the writer thread's share of the cores. Also the
size of one checkpoint.

Prints the CPU model, each repeat, and the ratio checkpointed / plain of each pair's step time
with its median (the cost of checkpoints every E steps; the copy alone is the target: within a
few percent at E = 10).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "common"))
from machine import cpu_model  # noqa: E402

JOBS = {"mlp": os.path.join(ROOT, "bench", "training", "mlp.pbtxt")}
WARMUP = 5


def run(softwire, job, steps, extra, scratch):
    metrics = os.path.join(scratch, "metrics.jsonl")
    started = time.monotonic()
    subprocess.run([softwire, "run", job, "--steps", str(steps), "--quiet", "--metrics-out",
                    metrics] + extra, check=True)
    wall = time.monotonic() - started
    with open(metrics) as lines:
        seconds = [json.loads(line)["seconds"] for line in lines]
    return sum(seconds[WARMUP:]), wall


def folder_bytes(path):
    total = 0
    for directory, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(directory, name)) for name in files)
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--softwire", default=os.path.join(ROOT, "build", "cli", "softwire"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--json", help="also write the figures to FILE")
    args = parser.parse_args()
    print(f"cpu: {cpu_model()}; {os.cpu_count()} cores")
    print(f"checkpoint every {args.every} steps of {args.steps}; step time summed after "
          f"step {WARMUP}; ratio = checkpointed / plain, paired")
    report = {"cpu": cpu_model(), "every": args.every, "steps": args.steps, "jobs": {}}
    scratch = tempfile.mkdtemp(prefix="softwire_checkpoint_bench_")
    try:
        for name, job in JOBS.items():
            ratios, plain_times, saved_bytes = [], [], 0
            for repeat in range(args.repeats):
                plain, _ = run(args.softwire, job, args.steps, [], scratch)
                directory = os.path.join(scratch, "ckpt")
                shutil.rmtree(directory, ignore_errors=True)
                checkpointed, _ = run(args.softwire, job, args.steps,
                                      ["--checkpoint-every", str(args.every), "--checkpoint-dir",
                                       directory, "--keep-checkpoints", "1"], scratch)
                latest = sorted(os.listdir(directory))[-1]
                saved_bytes = folder_bytes(os.path.join(directory, latest))
                ratios.append(checkpointed / plain)
                plain_times.append(plain)
                print(f"{name} repeat {repeat}: plain {plain:.3f} s, checkpointed "
                      f"{checkpointed:.3f} s, ratio {checkpointed / plain:.3f}")
            median = statistics.median(ratios)
            print(f"{name}: one checkpoint {saved_bytes / 2**20:.1f} MiB; median ratio "
                  f"{median:.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})")
            report["jobs"][name] = {"ratios": ratios, "median_ratio": median,
                                    "checkpoint_bytes": saved_bytes,
                                    "median_plain_seconds": statistics.median(plain_times)}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
