#!/usr/bin/python3
"""Compares softwire with PyTorch on ResNet-20 training (issue 18), alternating, in one sitting.

Usage: bench/conv/compare.py [--rounds 3] [--softwire build/cli/softwire] [--steps 30]
                             [--softwire-modes float32,bf16,float32:nchw,bf16:nchw]
                             [--pytorch-modes float32,channels_last,bf16,bf16_channels_last]
                             [--pytorch-steps 15] [--pytorch-settings 1:2,2:1] [--json FILE]

Each round runs every softwire mode (`softwire run bench/conv/resnet20.pbtxt --steps N
--precision P [--layouts L] [--FLAG ...] --metrics-out FILE`; a mode is
`precision[:layouts][+FLAG...]`, layouts auto when left out, each +FLAG passed as --FLAG, e.g.
`bf16+no-bf16-activations`) and then every PyTorch mode (pytorch_resnet20.py, each thread setting in a
fresh process, its fastest kept), so both sides see the same machine. Prints each mode's median
samples/s over the rounds with its range, the load average and the cpu model, and the ratios
of each softwire mode to PyTorch's fastest mode and to each PyTorch mode, and each round's
ratio of every softwire mode to the mode PyTorch was fastest in over the rounds (same-round
ratios: both sides saw the same load).

softwire's samples/s per run: the median per-step "samples_per_second" of the metrics file
after the first 20% of the steps (warm-up: oneDNN creates its primitives in the first step).

Exit status: 0 when every run succeeded, 1 otherwise.
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
from machine import cpu_model  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "demos", "common"))

import softwire_metrics  # noqa: E402


def softwire_run(binary, mode, steps):
    mode, *flags = mode.split("+")
    precision, _, layouts = mode.partition(":")
    with tempfile.TemporaryDirectory() as directory:
        metrics = os.path.join(directory, "metrics.jsonl")
        command = [binary, "run", os.path.join(HERE, "resnet20.pbtxt"), "--steps", str(steps),
                   "--precision", precision, "--metrics-out", metrics]
        if layouts:
            command += ["--layouts", layouts]
        command += ["--" + flag for flag in flags]
        result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        if result.returncode != 0:
            sys.stderr.write(f"softwire {mode} failed:\n{result.stderr[-2000:]}\n")
            return None
        records, _ = softwire_metrics.read_records(metrics)
    rates = [r["samples_per_second"] for r in records if r.get("samples_per_second")]
    rates = rates[max(1, len(rates) // 5):]
    return statistics.median(rates) if rates else None


def pytorch_run(modes, steps, settings):
    command = [sys.executable, os.path.join(HERE, "pytorch_resnet20.py"), "--steps", str(steps),
               "--warmup", "3", "--settings", settings, "--modes", modes]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        sys.stderr.write(f"pytorch failed:\n{result.stderr[-2000:]}\n")
        return None
    return {mode: figures["samples_per_second"]
            for mode, figures in json.loads(result.stdout).items()}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--softwire", default=os.path.join(ROOT, "build", "cli", "softwire"))
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--softwire-modes", default="float32,bf16,float32:nchw,bf16:nchw")
    parser.add_argument("--pytorch-modes",
                        default="float32,channels_last,bf16,bf16_channels_last")
    parser.add_argument("--pytorch-steps", type=int, default=15)
    parser.add_argument("--pytorch-settings", default="1:2,2:1")
    parser.add_argument("--json")
    arguments = parser.parse_args(argv)
    figures = {}
    loads = []
    ok = True
    for round_index in range(arguments.rounds):
        loads.append(os.getloadavg()[0])
        for mode in arguments.softwire_modes.split(","):
            rate = softwire_run(arguments.softwire, mode, arguments.steps)
            ok &= rate is not None
            if rate is not None:
                figures.setdefault("softwire " + mode, []).append(rate)
                print(f"round {round_index + 1}: softwire {mode}: {rate:.0f} samples/s",
                      flush=True)
        torch_figures = pytorch_run(arguments.pytorch_modes, arguments.pytorch_steps,
                                    arguments.pytorch_settings)
        ok &= torch_figures is not None
        for mode, rate in (torch_figures or {}).items():
            figures.setdefault("pytorch " + mode, []).append(rate)
            print(f"round {round_index + 1}: pytorch {mode}: {rate:.0f} samples/s", flush=True)
    loads.append(os.getloadavg()[0])
    medians = {name: statistics.median(rates) for name, rates in figures.items()}
    print(f"\ncpu: {cpu_model()}; load average {min(loads):.1f}-{max(loads):.1f}; "
          f"{arguments.rounds} rounds, medians (range)")
    for name, rates in figures.items():
        print(f"  {name:32s} {medians[name]:7.0f}  ({min(rates):.0f}-{max(rates):.0f})")
    torch_names = [name for name in medians if name.startswith("pytorch ")]
    if torch_names:
        fastest = max(torch_names, key=medians.get)
        print(f"PyTorch's fastest: {fastest[8:]} ({medians[fastest]:.0f} samples/s)")
        for name in medians:
            if name.startswith("softwire "):
                ratios = ", ".join(f"{medians[name] / medians[t]:.2f}x {t[8:]}" for t in torch_names)
                print(f"  {name}: {medians[name] / medians[fastest]:.2f}x the fastest ({ratios})")
        for name in medians:
            if name.startswith("softwire ") and len(figures[name]) == len(figures[fastest]):
                same_round = ", ".join(f"{mine / theirs:.2f}x"
                                       for mine, theirs in zip(figures[name], figures[fastest]))
                print(f"  {name} / {fastest[8:]}, same-round ratios: {same_round}")
    if arguments.json:
        with open(arguments.json, "w") as stream:
            json.dump({"figures": figures, "medians": medians, "loads": loads,
                       "cpu": cpu_model()}, stream, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
