#!/usr/bin/python3
"""What ordering edges cost a training step: the same job run with and without them.

Usage: bench/memory/ordering_edges_cost.py [--softwire build/cli/softwire] [--repeats 6]
                                           [--steps 40] [--jobs mlp,charlm] [--json FILE]

Ordering edges (order_weight_gradients, docs/PROTOCOL.md "Ordering inputs") make the next
backward op on a device wait for each weight-gradient product, so the activations it reads die
as backward goes. They add no kernel work; they only fix an order among actors one compute
queue runs one at a time anyway. For each job (bench/training/mlp.pbtxt; demos/charlm/charlm.pbtxt,
whose data demos/charlm/prepare.py writes), `--repeats` pairs, alternating which runs first:
  - `softwire run JOB --steps N --quiet --metrics-out F --trace T --trace-steps 10:20`, and
  - the same with `--no-ordering-edges`.
Both sides are traced (the same recording cost). Per run: the sum of the steps' seconds after
the first five (the engine's own step timing), the child's user CPU seconds (wait4), and from
the trace every compute firing's duration summed per actor over the window. Printed: the CPU
model and load, each pair, the medians and the median of the per-pair ratios (with / without);
the ten actors whose summed kernel time differs most between the two sides (medians over the
runs); and whether the losses of every step agree to every digit `--metrics-out` prints (they
must: no kernel sees an ordering input). `softwire simulate` gives each side's step time by the
cost model, which has no noise.
"""

import argparse
import json
import os
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
WINDOW = "10:20"
SIDES = {"with": [], "without": ["--no-ordering-edges"]}


def run(softwire, job, steps, extra, scratch):
    """(seconds after warm-up, user CPU seconds, losses, per-actor kernel microseconds)."""
    metrics = os.path.join(scratch, "metrics.jsonl")
    trace = os.path.join(scratch, "trace.json")
    records, user = run_metrics(softwire, job, steps, metrics,
                                ["--trace", trace, "--trace-steps", WINDOW] + extra, ROOT)
    seconds = sum(r["seconds"] for r in records[WARMUP:])
    losses = [r["loss"] for r in records]
    with open(trace) as text:
        events = json.load(text)["traceEvents"]
    kernels = {}
    for event in events:
        args = event.get("args", {})
        if event.get("ph") == "X" and args.get("kind") == "compute":
            kernels[event["name"]] = kernels.get(event["name"], 0.0) + event["dur"]
    return seconds, user, losses, kernels


def simulated_step_ms(softwire, job, extra):
    text = subprocess.run([softwire, "simulate", job, "--steps", "5"] + extra, check=True,
                          cwd=ROOT, capture_output=True, text=True).stdout
    for line in text.splitlines():
        if "steady step" in line:
            return float(line.split("steady step")[1].split("ms")[0])
    return -1.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--softwire", default=os.path.join(ROOT, "build", "cli", "softwire"))
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--steps", type=int, default=40)
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
    print(f"{args.steps} steps a run, step time summed after step {WARMUP}; kernels traced over "
          f"steps {WINDOW}; ratio = with / without ordering edges, paired, order alternating")
    report = {"cpu": cpu_model(), "steps": args.steps, "jobs": {}}
    scratch = tempfile.mkdtemp(prefix="softwire_ordering_edges_")
    try:
        for name in names:
            job = JOBS[name]
            seconds = {side: [] for side in SIDES}
            user = {side: [] for side in SIDES}
            kernels = {side: [] for side in SIDES}
            losses = {}
            ratios, user_ratios = [], []
            for repeat in range(args.repeats):
                order = list(SIDES) if repeat % 2 == 0 else list(reversed(SIDES))
                pair = {}
                for side in order:
                    pair[side] = run(args.softwire, job, args.steps, SIDES[side], scratch)
                    seconds[side].append(pair[side][0])
                    user[side].append(pair[side][1])
                    kernels[side].append(pair[side][3])
                    losses.setdefault(side, pair[side][2])
                ratios.append(pair["with"][0] / pair["without"][0])
                user_ratios.append(pair["with"][1] / pair["without"][1])
                print(f"{name} pair {repeat}: with {pair['with'][0]:.3f} s ({pair['with'][1]:.2f} s"
                      f" user), without {pair['without'][0]:.3f} s ({pair['without'][1]:.2f} s"
                      f" user), ratio {ratios[-1]:.4f}", flush=True)
            steps = args.steps - WARMUP
            actors = sorted(set().union(*[k.keys() for k in kernels["with"]]))
            medians = {side: {a: statistics.median(k.get(a, 0.0) for k in kernels[side])
                              for a in actors} for side in SIDES}
            total = {side: sum(medians[side].values()) for side in SIDES}
            simulated = {side: simulated_step_ms(args.softwire, job, SIDES[side])
                         for side in SIDES}
            same_losses = losses["with"] == losses["without"]
            print(f"{name}: step {statistics.median(seconds['with']) / steps * 1e3:.2f} ms with,"
                  f" {statistics.median(seconds['without']) / steps * 1e3:.2f} ms without; median"
                  f" ratio {statistics.median(ratios):.4f} (min {min(ratios):.4f}, max"
                  f" {max(ratios):.4f}); user CPU median ratio"
                  f" {statistics.median(user_ratios):.4f}; compute kernels over the window"
                  f" {total['with'] / 1e3:.1f} ms with, {total['without'] / 1e3:.1f} ms without"
                  f" (ratio {total['with'] / total['without']:.4f}); simulated step"
                  f" {simulated['with']:.3f} ms with, {simulated['without']:.3f} ms without;"
                  f" losses of all {len(losses['with'])} steps equal: {same_losses};"
                  f" load {load_average():.2f}")
            moved = sorted(actors, key=lambda a: -abs(medians["with"][a] - medians["without"][a]))
            for actor in moved[:10]:
                print(f"  {actor}: {medians['with'][actor] / 1e3:.2f} ms with,"
                      f" {medians['without'][actor] / 1e3:.2f} ms without")
            report["jobs"][name] = {"ratios": ratios, "user_ratios": user_ratios,
                                    "seconds": seconds, "user_seconds": user,
                                    "kernel_ms": {s: total[s] / 1e3 for s in SIDES},
                                    "simulated_step_ms": simulated, "losses_equal": same_losses}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
