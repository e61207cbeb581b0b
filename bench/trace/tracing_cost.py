#!/usr/bin/python3
"""What tracing costs a training step: the same job run with and without --trace.

Usage: bench/trace/tracing_cost.py [--softwire build/cli/softwire] [--repeats 7]
                                   [--steps 60] [--jobs mlp,charlm] [--json FILE]

For each job (bench/training/mlp.pbtxt, the MLP bench job; demos/charlm/charlm.pbtxt, the
flagship transformer, whose data demos/charlm/prepare.py writes), `--repeats` pairs, alternating
which runs first so both see the same machine noise:
  - `softwire run JOB --steps N --metrics-out F` (the peer), and
  - the same with `--trace T` (every firing of every step recorded).
A run's time is the sum of its steps' seconds after the first five (the engine's own step
timing): process start and writing the trace file after the last step are left out, so what
is measured is the recording the firings do while the job trains. Also the firings per step
(from the trace's summary), so the cost per firing can be set beside the no-op chain's
(bench/actor_overhead, BENCHMARKS.md "Tracing overhead").

Prints the CPU model and the load, each pair, and the median of traced / untraced (target: at
most 1.01).
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "common"))
from machine import cpu_model, load_average  # noqa: E402
from softwire_runs import run_metrics  # noqa: E402

JOBS = {
    "mlp": os.path.join(ROOT, "bench", "training", "mlp.pbtxt"),
    "charlm": os.path.join(ROOT, "demos", "charlm", "charlm.pbtxt"),
}
WARMUP = 5


def step_seconds(softwire, job, steps, extra, scratch):
    metrics = os.path.join(scratch, "metrics.jsonl")
    records, _ = run_metrics(softwire, job, steps, metrics, extra, ROOT)
    return sum(r["seconds"] for r in records[WARMUP:])


def firings_per_step(trace, steps):
    with open(trace + ".summary.txt") as summary:
        text = summary.read()
    found = re.search(r"(\d+) firings", text)
    return int(found.group(1)) / steps if found else -1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--softwire", default=os.path.join(ROOT, "build", "cli", "softwire"))
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--jobs", default="mlp,charlm")
    parser.add_argument("--json", help="also write the figures to FILE")
    args = parser.parse_args()
    names = [name for name in args.jobs.split(",") if name]
    for name in names:
        if name not in JOBS:
            parser.error(f"unknown job '{name}' (known: {', '.join(JOBS)})")
    if "charlm" in names and not os.path.exists(os.path.join(ROOT, "data", "licenses.txt")):
        subprocess.run([sys.executable, os.path.join(ROOT, "demos", "charlm", "prepare.py")],
                       check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    print(f"cpu: {cpu_model()}; {os.cpu_count()} cores; load {load_average():.2f}")
    print(f"{args.steps} steps a run, step time summed after step {WARMUP}; "
          f"ratio = traced / untraced, paired, order alternating")
    report = {"cpu": cpu_model(), "steps": args.steps, "jobs": {}}
    scratch = tempfile.mkdtemp(prefix="softwire_tracing_cost_")
    try:
        for name in names:
            job = JOBS[name]
            trace = os.path.join(scratch, "trace.json")
            ratios, untraced_times = [], []
            per_step = -1
            for repeat in range(args.repeats):
                pair = {}
                order = ("untraced", "traced") if repeat % 2 == 0 else ("traced", "untraced")
                for mode in order:
                    extra = ["--trace", trace] if mode == "traced" else []
                    pair[mode] = step_seconds(args.softwire, job, args.steps, extra, scratch)
                per_step = firings_per_step(trace, args.steps)
                ratio = pair["traced"] / pair["untraced"]
                ratios.append(ratio)
                untraced_times.append(pair["untraced"])
                print(f"{name} pair {repeat}: untraced {pair['untraced']:.3f} s, traced "
                      f"{pair['traced']:.3f} s, ratio {ratio:.4f}", flush=True)
            median = statistics.median(ratios)
            step = statistics.median(untraced_times) / (args.steps - WARMUP)
            per_firing_ns = (median - 1) * step / per_step * 1e9 if per_step > 0 else -1
            print(f"{name}: {per_step:.0f} firings a step, {step * 1e3:.2f} ms a step; median "
                  f"ratio {median:.4f} (min {min(ratios):.4f}, max {max(ratios):.4f}); "
                  f"{per_firing_ns:.0f} ns a firing at the median; load {load_average():.2f}")
            report["jobs"][name] = {"ratios": ratios, "median_ratio": median,
                                    "firings_per_step": per_step, "step_seconds": step,
                                    "ns_per_firing": per_firing_ns}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
