#!/usr/bin/python3
"""Fused actors against the actors they replace, in the running engine.

fusion_bench times each fused kernel and its members alone, on buffers of their own; in a
running job a member reads what the one before it has just written, from cache, which changes
the answer (docs/KERNELS.md, "Why fusion was slower in place"). This script traces the job
with fusion and with --no-fusion (or --no-epilogues) in alternating pairs, takes each actor's
median kernel time per firing over the traced steps, and prints, per pair and site, the fused
actor against the sum of its members, and the sum over every fused site. It also prints the
sum over the actors both plans share, which should agree: when it does not, the machine changed
speed between the two runs and the pair says little. Medians of kernel times are much steadier
on a shared machine than whole steps.

    bench/precision/fusion_in_place.py demos/charlm/charlm.pbtxt --precision bf16 --pairs 2
    bench/precision/fusion_in_place.py bench/training/mlp.pbtxt --precision bf16 --steps 200
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from machine import cpu_model, load_average  # noqa: E402


def medians(trace_path):
    with open(trace_path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    durations = collections.defaultdict(list)
    for event in events:
        if event.get("ph") == "X" and event.get("cat") not in ("state",) and \
                event["name"] not in ("starved", "blocked", "queued"):
            durations[event["name"]].append(event["dur"])
    return {name: statistics.median(values) for name, values in durations.items()}


def traced_run(softwire, job, flags, steps, directory, label):
    path = os.path.join(directory, label + ".json")
    first = max(1, steps // 3)
    subprocess.run([softwire, "run", job, "--steps", str(steps), "--quiet", "--trace", path,
                    "--trace-steps", f"{first}:{steps}"] + flags,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return medians(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("job")
    parser.add_argument("--precision", default="float32")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--against", default="--no-fusion",
                        help="the flag of the plan to compare with: --no-fusion or --no-epilogues")
    parser.add_argument("--softwire", default="build/cli/softwire")
    args = parser.parse_args()
    print(f"cpu: {cpu_model()}; job {args.job}, {args.precision}, fused against {args.against}")
    base = ["--precision", args.precision]
    fused_sums, member_sums = [], []
    with tempfile.TemporaryDirectory() as directory:
        for pair in range(args.pairs):
            fused = traced_run(args.softwire, args.job, base, args.steps, directory, "fused")
            other = traced_run(args.softwire, args.job, base + [args.against], args.steps,
                               directory, "other")
            print(f"pair {pair + 1} (load {load_average():.1f}): us per firing, median")
            total_fused = total_members = 0.0
            for name in sorted(fused):
                if "+" not in name:
                    continue
                members = name.split("+")
                if not all(member in other for member in members):
                    continue  # A member the other plan fuses too (--no-epilogues).
                member_sum = sum(other[member] for member in members)
                total_fused += fused[name]
                total_members += member_sum
                print(f"  {name[:72]:72s} {fused[name]:8.1f} {member_sum:8.1f} "
                      f"{member_sum / fused[name]:5.2f}x")
            shared = [name for name in fused if "+" not in name and name in other]
            print(f"  fused sites {total_fused:.0f} us against their members {total_members:.0f}"
                  f" us ({total_members / max(total_fused, 1e-9):.3f}x); actors both plans"
                  f" share: {sum(fused[n] for n in shared):.0f} against"
                  f" {sum(other[n] for n in shared):.0f} us")
            fused_sums.append(total_fused)
            member_sums.append(total_members)
    print(f"median over pairs: fused sites {statistics.median(fused_sums):.0f} us, members "
          f"{statistics.median(member_sums):.0f} us")


if __name__ == "__main__":
    sys.exit(main())
