#!/usr/bin/python3
"""What a source's second slot buys a training step: the MLP run with one and with two.

Usage: bench/memory/source_slots_cost.py [--softwire build/cli/softwire] [--repeats 5]
                                         [--steps 200] [--layouts one,dp2,pp2mb4,mb4]
                                         [--json FILE]

With two slots the source may fill the next piece's batch while this piece's readers still hold
the other slot; with one it fills only once they have released it (docs/DECISIONS.md, "A
source's second slot"). The compiler gives one slot where the plan cannot overlap the fill (one
cpu device) and two elsewhere; `--source-slots 1` and `--source-slots 2` force either. For each
layout of bench/training/mlp.pbtxt, `--repeats` pairs, alternating which side runs first:
  `softwire run bench/training/mlp.pbtxt --steps N --quiet --metrics-out F [layout flags]
   --source-slots S`, S = 1 and 2.
Per run: the median and the 10th percentile of the steps' `seconds` after the first five (the
engine's own step timing; on a loaded machine the 10th percentile is the least disturbed) and
the child's user CPU seconds (wait4). Printed: the CPU model and load, each pair,
per layout the medians of both sides, the median of the per-pair ratios (one / two slots) and
whether the losses of every step agree to every digit `--metrics-out` prints (they must: no
kernel sees a slot count), and the planned bytes of both sides (`softwire compile --json`).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "common"))
from machine import cpu_model, load_average  # noqa: E402
from softwire_runs import run_metrics  # noqa: E402

JOB = os.path.join(ROOT, "bench", "training", "mlp.pbtxt")
WARMUP = 5
LAYOUTS = {
    "one": [],  # One cpu device, one piece a step: the compiler's choice is 1.
    "mb4": ["--micro-batches", "4"],  # One cpu device, four pieces a step: 1.
    "dp2": ["--cluster", "2cpu", "--dp", "2"],  # Two devices: 2.
    "pp2mb4": ["--cluster", "2cpu", "--pp", "2", "--micro-batches", "4"],  # Two stages: 2.
}
SIDES = {"one": ["--source-slots", "1"], "two": ["--source-slots", "2"]}


def run(softwire, steps, extra, metrics):
    """(median step seconds after warm-up, user CPU seconds, losses, 10th-percentile step)."""
    records, user = run_metrics(softwire, JOB, steps, metrics, extra, ROOT)
    seconds = sorted(r["seconds"] for r in records[WARMUP:])
    step = statistics.median(seconds)
    return step, user, [r["loss"] for r in records], seconds[len(seconds) // 10]


def planned_bytes(softwire, extra):
    text = subprocess.run([softwire, "compile", JOB, "--json"] + extra, check=True, cwd=ROOT,
                          capture_output=True, text=True).stdout
    return sum(device["planned_bytes"] for device in json.loads(text)["devices"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--softwire", default=os.path.join(ROOT, "build", "cli", "softwire"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    parser.add_argument("--json", help="also write the figures to FILE")
    args = parser.parse_args()
    names = [name for name in args.layouts.split(",") if name]
    for name in names:
        if name not in LAYOUTS:
            parser.error(f"unknown layout '{name}' (known: {', '.join(LAYOUTS)})")
    if args.steps <= WARMUP:
        parser.error(f"--steps must be above the {WARMUP} warm-up steps")
    print(f"cpu: {cpu_model()}; {os.cpu_count()} cores; load {load_average():.2f}")
    print(f"{args.steps} steps a run, median step after step {WARMUP}; ratio = one / two source "
          f"slots, paired, order alternating")
    report = {"cpu": cpu_model(), "steps": args.steps, "layouts": {}}
    with tempfile.TemporaryDirectory(prefix="softwire_source_slots_") as scratch:
        metrics = os.path.join(scratch, "metrics.jsonl")
        for name in names:
            steps = {side: [] for side in SIDES}
            fast = {side: [] for side in SIDES}
            user = {side: [] for side in SIDES}
            losses = {}
            ratios, user_ratios, fast_ratios = [], [], []
            for repeat in range(args.repeats):
                order = list(SIDES) if repeat % 2 == 0 else list(reversed(SIDES))
                pair = {}
                for side in order:
                    pair[side] = run(args.softwire, args.steps, LAYOUTS[name] + SIDES[side],
                                     metrics)
                    steps[side].append(pair[side][0])
                    user[side].append(pair[side][1])
                    fast[side].append(pair[side][3])
                    losses.setdefault(side, pair[side][2])
                ratios.append(pair["one"][0] / pair["two"][0])
                user_ratios.append(pair["one"][1] / pair["two"][1])
                fast_ratios.append(pair["one"][3] / pair["two"][3])
                print(f"{name} pair {repeat}: one {pair['one'][0] * 1e3:.2f} ms"
                      f" ({pair['one'][1]:.2f} s user), two {pair['two'][0] * 1e3:.2f} ms"
                      f" ({pair['two'][1]:.2f} s user), ratio {ratios[-1]:.4f}; 10th-percentile step"
                      f" {pair['one'][3] * 1e3:.2f} / {pair['two'][3] * 1e3:.2f} ms;"
                      f" load {load_average():.2f}", flush=True)
            planned = {side: planned_bytes(args.softwire, LAYOUTS[name] + SIDES[side])
                       for side in SIDES}
            same_losses = losses["one"] == losses["two"]
            print(f"{name}: step {statistics.median(steps['one']) * 1e3:.2f} ms one,"
                  f" {statistics.median(steps['two']) * 1e3:.2f} ms two; median ratio"
                  f" {statistics.median(ratios):.4f} (min {min(ratios):.4f}, max"
                  f" {max(ratios):.4f}); 10th-percentile step {statistics.median(fast['one']) * 1e3:.2f}"
                  f" ms one, {statistics.median(fast['two']) * 1e3:.2f} ms two, median ratio"
                  f" {statistics.median(fast_ratios):.4f}; user CPU median ratio"
                  f" {statistics.median(user_ratios):.4f}; planned {planned['one']:,} B one,"
                  f" {planned['two']:,} B two; losses of all {len(losses['one'])} steps equal:"
                  f" {same_losses}; load {load_average():.2f}", flush=True)
            report["layouts"][name] = {"flags": LAYOUTS[name], "ratios": ratios,
                                       "user_ratios": user_ratios, "step_seconds": steps,
                                       "p10_step_seconds": fast, "p10_ratios": fast_ratios,
                                       "user_seconds": user, "planned_bytes": planned,
                                       "losses_equal": same_losses}
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
