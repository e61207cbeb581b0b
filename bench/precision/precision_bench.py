#!/usr/bin/python3
"""softwire float32 and bf16 against PyTorch float32 and bf16 autocast, MLP and charlm, one run.

Usage: bench/precision/precision_bench.py [--softwire build/cli/softwire] [--rounds 3]
                                          [--mlp-steps 60] [--charlm-steps 30] [--json FILE]
                                          [--floor build/bench/precision/product_floor_bench]

Prints the CPU model and its bf16 support first (bf16 pays only with avx512_bf16 or AMX; on a
CPU without them softwire's bf16 rows measure its float32 fallback and PyTorch's its emulation).
Then R rounds, each running every configuration once, in this order, so all see the same
machine noise (softwire bf16's variants right after softwire bf16):

  softwire MLP (bench/training/mlp.pbtxt)       --precision float32, --precision bf16, bf16
                                                with --no-epilogues (element-wise chains fused,
                                                but not into their products) and bf16 with
                                                --no-fusion (op fusion off), fed one fixed
                                                batch as the PyTorch peer is (compare.py's
                                                fixed_batch_job), so both time the step alone
  product floor (product_floor_bench)           the step's products alone, through the engine's
                                                kernels, float32 and bf16
  PyTorch MLP (bench/training/pytorch_mlp.py)   float32 at 1 torch thread + OpenBLAS 2,
                                                bf16 autocast at 2 torch threads + OpenBLAS 1
  softwire charlm (demos/charlm/charlm.pbtxt)   float32, bf16, bf16 --no-epilogues, bf16
                                                --no-fusion; its floor
  PyTorch charlm (demos/charlm/torch_reference.py) the same two modes and settings

Each PyTorch mode runs at its fastest setting, found by measuring both candidates every round
(T:B = torch threads : OpenBLAS threads): float32 1:2 (docs/ANCHORS.md: Debian's torch runs
float32 products in OpenBLAS on its own threads) or 2:1; autocast 2:1 (its bf16 products run in
oneDNN on torch's threads) or 1:1 (which wins when other processes load the cores: torch's
OpenMP barriers then wait for a descheduled thread).
Figures: MLP samples/s, charlm ms per step; each run's figure is the median over its steps after
the first fifth (warm-up), and the table shows the median over rounds. Each round prints the
load average when it ends. The charlm corpus is
made by demos/charlm/prepare.py into a temporary directory.
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
PYTHON = "/usr/bin/python3"
sys.path.insert(0, os.path.join(ROOT, "bench", "training"))
sys.path.insert(0, os.path.join(ROOT, "demos", "common"))

import compare  # noqa: E402  (fixed_batch_job)


def cpu_description():
    model, flags = "unknown", set()
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    bf16 = [f for f in ("avx512_bf16", "amx_bf16") if f in flags]
    return {"model": model, "cores": os.cpu_count(), "native_bf16": bool(bf16),
            "bf16_features": bf16 or ["none (avx512_bf16 and amx_bf16 absent)"],
            "load_average": os.getloadavg()}


def median_after_warmup(records, key):
    values = [r[key] for r in records[len(records) // 5:] if r.get(key)]
    return statistics.median(values) if values else float("nan")


def read_metrics(path):
    with open(path) as metrics:
        return [json.loads(line) for line in metrics if line.strip()]


def softwire_run(softwire, job, precision, steps, workdir, flags=()):
    metrics = os.path.join(workdir, "metrics.jsonl")
    subprocess.run([softwire, "run", job, "--precision", precision, "--steps", str(steps),
                    "--metrics-out", metrics, "--quiet"] + list(flags),
                   check=True, capture_output=True)
    records = read_metrics(metrics)
    return {"samples_per_second": median_after_warmup(records, "samples_per_second"),
            "ms_per_step": 1000 * median_after_warmup(records, "seconds"),
            "last_loss": records[-1]["loss"]}


def product_floor(floor, job, precision):
    output = subprocess.run([floor, job, "--precision", precision, "--steps", "20"], check=True,
                            capture_output=True, text=True).stdout
    figures = json.loads(output.strip().splitlines()[-1])
    return {"samples_per_second": figures["samples_per_second"],
            "ms_per_step": figures["ms_per_step"], "setting": "2 threads"}


SETTINGS = {"float32": ((1, 2), (2, 1)), "bf16": ((2, 1), (1, 1))}


def pytorch_mlp(precision, steps):
    settings = ",".join(f"{t}:{b}" for t, b in SETTINGS[precision])
    output = subprocess.run(
        [PYTHON, os.path.join(ROOT, "bench", "training", "pytorch_mlp.py"), "--settings",
         settings, "--precision", precision, "--steps", str(steps), "--repeats", "3",
         "--warmup", "5"], check=True, capture_output=True, text=True).stdout
    fastest = json.loads(output)["fastest"]
    return {"samples_per_second": fastest["samples_per_second"],
            "setting": f"{fastest['torch_threads']}:{fastest['openblas_threads']}"}


def pytorch_charlm(precision, steps, job, workdir):
    runs = [pytorch_charlm_setting(precision, steps, job, workdir, threads, blas)
            for threads, blas in SETTINGS[precision]]
    return min(runs, key=lambda run: run["ms_per_step"])


def pytorch_charlm_setting(precision, steps, job, workdir, threads, blas):
    metrics = os.path.join(workdir, "torch_metrics.jsonl")
    environment = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas), OMP_NUM_THREADS=str(threads))
    subprocess.run([PYTHON, os.path.join(ROOT, "demos", "charlm", "torch_reference.py"), "--job",
                    job, "--steps", str(steps), "--threads", str(threads), "--precision",
                    precision, "--metrics-out", metrics, "--print-every", "100000"],
                   check=True, capture_output=True, env=environment)
    records = read_metrics(metrics)
    return {"ms_per_step": 1000 * median_after_warmup(records, "seconds"),
            "last_loss": records[-1]["loss"], "setting": f"{threads}:{blas}"}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--softwire", default=os.path.join(ROOT, "build", "cli", "softwire"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mlp-steps", type=int, default=60)
    parser.add_argument("--charlm-steps", type=int, default=30)
    parser.add_argument("--floor", default=os.path.join(ROOT, "build", "bench", "precision",
                                                        "product_floor_bench"))
    parser.add_argument("--json", help="also write every run's figures here")
    arguments = parser.parse_args(argv)

    cpu = cpu_description()
    print(f"cpu: {cpu['model']}, {cpu['cores']} cores; bf16: {', '.join(cpu['bf16_features'])}; "
          f"load average {cpu['load_average'][0]:.2f}", flush=True)
    workdir = tempfile.mkdtemp(prefix="precision_bench_")
    try:
        subprocess.run([PYTHON, os.path.join(ROOT, "demos", "charlm", "prepare.py"), "--output",
                        os.path.join(workdir, "data", "licenses.txt")], check=True,
                       capture_output=True)
        charlm = os.path.join(workdir, "charlm.pbtxt")
        shutil.copy(os.path.join(ROOT, "demos", "charlm", "charlm.pbtxt"), charlm)
        mlp = compare.fixed_batch_job(os.path.join(ROOT, "bench", "training", "mlp.pbtxt"),
                                      workdir)
        runs = {}
        # bf16's variants run right after bf16 itself, so that each pair sees the same load.
        variants = {"float32": (), "bf16": (("bf16 no epilogues", "--no-epilogues"),
                                             ("bf16 no fusion", "--no-fusion"))}
        for round_index in range(arguments.rounds):
            for precision in ("float32", "bf16"):
                runs.setdefault(("softwire", "mlp", precision), []).append(
                    softwire_run(arguments.softwire, mlp, precision, arguments.mlp_steps, workdir))
                for name, flag in variants[precision]:
                    runs.setdefault(("softwire", "mlp", name), []).append(
                        softwire_run(arguments.softwire, mlp, "bf16", arguments.mlp_steps,
                                     workdir, [flag]))
                runs.setdefault(("pytorch", "mlp", precision), []).append(
                    pytorch_mlp(precision, arguments.mlp_steps))
                runs.setdefault(("softwire", "charlm", precision), []).append(
                    softwire_run(arguments.softwire, charlm, precision, arguments.charlm_steps,
                                 workdir))
                for name, flag in variants[precision]:
                    runs.setdefault(("softwire", "charlm", name), []).append(
                        softwire_run(arguments.softwire, charlm, "bf16", arguments.charlm_steps,
                                     workdir, [flag]))
                runs.setdefault(("pytorch", "charlm", precision), []).append(
                    pytorch_charlm(precision, arguments.charlm_steps, charlm, workdir))
                for model, job in (("mlp", mlp), ("charlm", charlm)):
                    runs.setdefault(("floor", model, precision), []).append(
                        product_floor(arguments.floor, job, precision))
            load = os.getloadavg()
            print(f"round {round_index + 1}/{arguments.rounds} done, load average "
                  f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    def median(key, figure):
        return statistics.median(run[figure] for run in runs[key])

    load = os.getloadavg()
    print(f"\nload average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"\n{'model':8} {'who':9} {'precision':10} {'figure':>14}   setting")
    table = []
    for model, figure, unit in (("mlp", "samples_per_second", "samples/s"),
                                ("charlm", "ms_per_step", "ms/step")):
        for who, precision in (("softwire", "float32"), ("softwire", "bf16"),
                               ("softwire", "bf16 no epilogues"), ("softwire", "bf16 no fusion"),
                               ("pytorch", "float32"),
                               ("pytorch", "bf16"), ("floor", "float32"), ("floor", "bf16")):
            key = (who, model, precision)
            value = median(key, figure)
            settings = sorted({run.get("setting", "device threads") for run in runs[key]})
            setting = ", ".join(settings)
            name = precision if who != "pytorch" or precision == "float32" else "bf16 autocast"
            print(f"{model:8} {who:9} {name:17} {value:10.1f} {unit:9} {setting}")
            table.append({"model": model, "who": who, "precision": precision,
                          unit: value, "setting": setting,
                          "runs": [run[figure] for run in runs[key]]})
    ratios = {
        "mlp softwire bf16 / pytorch autocast": median(("softwire", "mlp", "bf16"),
                                                       "samples_per_second") /
        median(("pytorch", "mlp", "bf16"), "samples_per_second"),
        "mlp softwire bf16 / softwire float32": median(("softwire", "mlp", "bf16"),
                                                       "samples_per_second") /
        median(("softwire", "mlp", "float32"), "samples_per_second"),
        "charlm pytorch autocast / softwire bf16 (step time)":
        median(("pytorch", "charlm", "bf16"), "ms_per_step") /
        median(("softwire", "charlm", "bf16"), "ms_per_step"),
        "mlp softwire bf16 / bf16 product floor (share of the floor)":
        median(("softwire", "mlp", "bf16"), "samples_per_second") /
        median(("floor", "mlp", "bf16"), "samples_per_second"),
        "mlp softwire bf16 fused / unfused": median(("softwire", "mlp", "bf16"),
                                                   "samples_per_second") /
        median(("softwire", "mlp", "bf16 no fusion"), "samples_per_second"),
        "mlp softwire bf16 / bf16 no epilogues": median(("softwire", "mlp", "bf16"),
                                                        "samples_per_second") /
        median(("softwire", "mlp", "bf16 no epilogues"), "samples_per_second"),
        "charlm softwire bf16 no epilogues / bf16 (step time)":
        median(("softwire", "charlm", "bf16 no epilogues"), "ms_per_step") /
        median(("softwire", "charlm", "bf16"), "ms_per_step"),
        "charlm softwire bf16 unfused / fused (step time)":
        median(("softwire", "charlm", "bf16 no fusion"), "ms_per_step") /
        median(("softwire", "charlm", "bf16"), "ms_per_step"),
        "charlm bf16 product floor / softwire bf16 (share of the floor)":
        median(("floor", "charlm", "bf16"), "ms_per_step") /
        median(("softwire", "charlm", "bf16"), "ms_per_step"),
        "charlm softwire float32 / softwire bf16 (step time)":
        median(("softwire", "charlm", "float32"), "ms_per_step") /
        median(("softwire", "charlm", "bf16"), "ms_per_step"),
    }
    print()
    for name, value in ratios.items():
        print(f"{name}: {value:.2f}x")
    if arguments.json:
        with open(arguments.json, "w") as out:
            json.dump({"cpu": cpu, "rounds": arguments.rounds, "table": table,
                       "ratios": ratios}, out, indent=2)


if __name__ == "__main__":
    main(sys.argv[1:])
