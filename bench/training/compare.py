#!/usr/bin/python3
"""Compares softwire with PyTorch on the MLP training benchmark, as a ratio measured in one run.

Usage: bench/training/compare.py [--rounds 5] [--softwire build/cli/softwire]
                                 [--job bench/training/mlp.pbtxt] [--steps 300]
                                 [--pytorch-setting 1:2] [--skip-softwire] [--json FILE]
                                 [--data fixed|synthetic]

Alternates R rounds of one PyTorch run (pytorch_mlp.py at its fastest setting) and one
`softwire run JOB --metrics-out FILE`, so both sides see the same machine noise, then prints
each side's median samples/s, the ratio softwire / PyTorch, and each side's GFLOP/s
(6 * batch * parameters FLOPs per step) next to the machine's sgemm rate (NumPy's OpenBLAS,
n = 2048, 2 threads, best of 5).

softwire's samples/s per run: the median over the steps after the first 10% (warm-up) of the
per-step "samples_per_second" in the metrics file; without it, batch / the median per-step
"seconds"; without those, the run's wall time including start-up and compilation (reported as
such).

--data fixed (the default) feeds softwire what the PyTorch peer trains on: one batch of standard
normal pixels and uniform labels drawn once (NumPy, seed 0), written as .npy files beside a copy
of the job whose source reads them, so both sides time the training step alone. --data
synthetic keeps the job's synthetic source, which draws a new batch inside the engine every
step (counter-based hashes, Box-Muller): the step plus data generation on the same cores.

Exit status: 0 when every requested
side ran, 1 otherwise (the PyTorch figures are still printed).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "demos", "common"))

import pytorch_mlp  # noqa: E402
import softwire_metrics  # noqa: E402

SGEMM_SCRIPT = """
import time, numpy as np
n = 2048
a = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
b = np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)
a @ b
best = min((lambda t: (a @ b, time.perf_counter() - t)[1])(time.perf_counter()) for _ in range(5))
print(2 * n ** 3 / best / 1e9)
"""


def sgemm_gflops(threads):
    environment = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    output = subprocess.run([sys.executable, "-c", SGEMM_SCRIPT], env=environment, check=True,
                            capture_output=True, text=True).stdout
    return float(output)


def pytorch_round(setting, arguments):
    torch_threads, blas_threads = setting
    options = argparse.Namespace(steps=arguments.pytorch_steps, repeats=3, warmup=10)
    return pytorch_mlp.run_setting(torch_threads, blas_threads, options)["samples_per_second"]


def softwire_rate(metrics_path, batch, wall_seconds, steps):
    """(samples/s, how it was derived) from one run's metrics file (cli/step_output.h: one JSON
    line per step with "samples_per_second" and "seconds", the step's wall time)."""
    records, _ = softwire_metrics.read_records(metrics_path)
    skip = len(records) // 10  # Warm-up: the first tenth of the steps.
    measured = records[skip:] or records

    def positive(key):
        values = [r.get(key) for r in measured]
        return [float(v) for v in values if isinstance(v, (int, float)) and v > 0]

    rates = positive("samples_per_second")
    if rates:
        return statistics.median(rates), "median per-step samples_per_second"
    durations = positive("seconds")
    if durations:
        return batch / statistics.median(durations), "median per-step seconds"
    return steps * batch / wall_seconds, "whole run wall time, including start-up"


def fixed_batch_job(job, scratch):
    """A copy of `job` in `scratch` whose source reads one fixed batch from .npy files."""
    import numpy
    generator = numpy.random.default_rng(0)
    features = generator.standard_normal((pytorch_mlp.BATCH, pytorch_mlp.LAYERS[0]),
                                         dtype=numpy.float32)
    labels = generator.integers(0, pytorch_mlp.LAYERS[-1], pytorch_mlp.BATCH, dtype=numpy.int32)
    numpy.save(os.path.join(scratch, "x.npy"), features)
    numpy.save(os.path.join(scratch, "y.npy"), labels)
    with open(job) as source:
        text = source.read()
    fixed, replaced = re.subn(r"synthetic\s*\{[^}]*\}", 'npy { path: "x.npy" path: "y.npy" }', text,
                              count=1)
    if replaced != 1:
        raise ValueError(f"{job}: no synthetic source to replace with a fixed batch")
    path = os.path.join(scratch, "fixed_batch_" + os.path.basename(job))
    with open(path, "w") as output:
        output.write(fixed)
    return path


def softwire_round(arguments, scratch, round_index):
    metrics = os.path.join(scratch, f"metrics_{round_index}.json")
    command = [arguments.softwire, "run", arguments.job, "--metrics-out", metrics]
    if arguments.steps:
        command += ["--steps", str(arguments.steps)]
    started = time.perf_counter()
    process = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if process.returncode != 0:
        tail = "\n".join((process.stdout + process.stderr).splitlines()[-15:])
        raise RuntimeError(f"`{' '.join(command)}` exited with {process.returncode}:\n{tail}")
    steps = arguments.steps or len(softwire_metrics.read_losses(metrics))
    return softwire_rate(metrics, pytorch_mlp.BATCH, wall, steps)


def gflops(samples_per_second):
    return samples_per_second / pytorch_mlp.BATCH * pytorch_mlp.FLOPS_PER_STEP / 1e9


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--softwire", default=os.path.join(ROOT, "build", "cli", "softwire"))
    parser.add_argument("--job", default=os.path.join(HERE, "mlp.pbtxt"))
    parser.add_argument("--steps", type=int, help="softwire steps per run (default: the job's)")
    parser.add_argument("--pytorch-setting", default="1:2",
                        help="torch threads:OpenBLAS threads (pytorch_mlp.py --settings all "
                             "finds the fastest)")
    parser.add_argument("--pytorch-steps", type=int, default=40, help="steps per timed run")
    parser.add_argument("--skip-softwire", action="store_true")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--data", choices=["fixed", "synthetic"], default="fixed",
                        help="softwire's input: one fixed batch as PyTorch's (default), or the "
                             "job's synthetic source drawing a new batch every step")
    arguments = parser.parse_args(argv)

    setting = pytorch_mlp.parse_settings(arguments.pytorch_setting)[0]
    run_softwire = not arguments.skip_softwire
    problem = None
    if run_softwire and not os.access(arguments.softwire, os.X_OK):
        problem = (f"{arguments.softwire} is not built (scripts/build --target softwire); "
                   "measuring PyTorch only")
        run_softwire = False
    sgemm = sgemm_gflops(2)
    torch_rates, softwire_rates, derivation = [], [], None
    with tempfile.TemporaryDirectory(prefix="softwire_compare_") as scratch:
        if run_softwire and arguments.data == "fixed":
            arguments.job = fixed_batch_job(arguments.job, scratch)
        for round_index in range(arguments.rounds):
            torch_rates.append(pytorch_round(setting, arguments))
            line = f"round {round_index + 1}/{arguments.rounds}: pytorch {torch_rates[-1]:,.0f}"
            if run_softwire:
                try:
                    rate, derivation = softwire_round(arguments, scratch, round_index)
                    softwire_rates.append(rate)
                    line += f", softwire {rate:,.0f}"
                except (RuntimeError, ValueError, OSError) as error:
                    problem = f"softwire run failed: {error}"
                    run_softwire = False
            print(line + " samples/s", file=sys.stderr, flush=True)

    torch_median = statistics.median(torch_rates)
    summary = {
        "benchmark": "mlp_784_1024_1024_10_batch256_sgd_momentum_train_step",
        "rounds": arguments.rounds, "sgemm_gflops_2_threads": round(sgemm, 1),
        "softwire_data": arguments.data,
        "pytorch": {"setting": {"torch_threads": setting[0], "openblas_threads": setting[1]},
                    "samples_per_second": round(torch_median, 1),
                    "runs": [round(r, 1) for r in torch_rates],
                    "gflops_per_second": round(gflops(torch_median), 1)},
    }
    print(f"machine sgemm (OpenBLAS, n=2048, 2 threads): {sgemm:.0f} GFLOP/s")
    print(f"pytorch  {torch_median:10,.0f} samples/s  {gflops(torch_median):6.1f} GFLOP/s "
          f"({gflops(torch_median) / sgemm:.0%} of sgemm)  median of {len(torch_rates)}")
    if softwire_rates:
        softwire_median = statistics.median(softwire_rates)
        summary["softwire"] = {"samples_per_second": round(softwire_median, 1),
                               "runs": [round(r, 1) for r in softwire_rates],
                               "gflops_per_second": round(gflops(softwire_median), 1),
                               "derived_from": derivation}
        summary["ratio_softwire_over_pytorch"] = round(softwire_median / torch_median, 3)
        print(f"softwire {softwire_median:10,.0f} samples/s  {gflops(softwire_median):6.1f} "
              f"GFLOP/s ({gflops(softwire_median) / sgemm:.0%} of sgemm)  median of "
              f"{len(softwire_rates)} ({derivation})")
        print(f"ratio softwire / pytorch: {softwire_median / torch_median:.2f}")
    if problem:
        summary["problem"] = problem
        print(problem)
    if arguments.json:
        with open(arguments.json, "w") as output:
            json.dump(summary, output, indent=2)
    requested_all = arguments.skip_softwire or (bool(softwire_rates) and problem is None)
    return 0 if requested_all else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
