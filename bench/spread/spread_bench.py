#!/usr/bin/python3
"""Run-to-run spread: the same jobs run many times, alternating, each run's median step time.

Usage: bench/spread/spread_bench.py [--runs 10] [--softwire build/cli/softwire]
                                    [--jobs mlp,charlm,gpt3] [--peer] [--json FILE]
                                    [--pinned] [--baseline OTHER_SOFTWIRE]

A job's speed should not depend on which run it is: a benchmark whose runs differ by 1.3x
can flip a ratio against a peer. This runs every job `--runs` times, round-robin (mlp, charlm,
gpt3, mlp, ...; each softwire run is followed by the other engines' runs of the same job: PyTorch
with --peer, `softwire run --pin-threads` with --pinned, another softwire binary (say, a build
from before a change) with --baseline), so every job and engine sees the same machine noise,
and prints per job and engine:
  - each run's median step time (the median over the run's steps after the first `warmup`),
  - the spread: slowest run / fastest run (target: <= 1.10),
  - the median of the runs.

The jobs:
  mlp     bench/training/mlp.pbtxt: MLP 784-1024-1024-10, batch 256, SGD momentum, 60 steps
  charlm  demos/charlm/charlm.pbtxt: the flagship 2-block transformer (width 128), 30 steps
  gpt3    the same generator with other shapes: 3 blocks, width 160, 5 heads, context 48,
          30 steps (written to out/spread/ by demos/charlm/make_job.py)
PyTorch (--peer, Debian's python3-torch) runs the same models at its fastest fp32 setting
(torch 1 thread, OpenBLAS 2 threads): the MLP through bench/training/pytorch_mlp.py's model,
the transformers through demos/charlm/torch_reference.py.

Prints the CPU model first. Exit status 0 when every run finished.
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
sys.path.insert(0, os.path.join(ROOT, "demos", "common"))

import softwire_metrics  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "bench", "common"))
from machine import cpu_model  # noqa: E402

CHARLM = os.path.join(ROOT, "demos", "charlm")
PYTORCH_SETTING = {"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "1"}


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("flags"):
                    flags = line.split(":", 1)[1].split()
                    return [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f in flags]
    except OSError:
        pass
    return []


class Job:
    def __init__(self, name, path, steps, warmup, torch_command):
        self.name, self.path, self.steps, self.warmup = name, path, steps, warmup
        self.torch_command = torch_command  # (metrics_file) -> argv


def prepare_jobs(names, out_dir):
    """The jobs by name; writes the charlm data and the gpt3 job when missing."""
    data = os.path.join(CHARLM, "data", "licenses.txt")
    if ("charlm" in names or "gpt3" in names) and not os.path.exists(data):
        subprocess.run([sys.executable, os.path.join(CHARLM, "prepare.py")], check=True,
                       stdout=subprocess.DEVNULL)
    jobs = {}
    jobs["mlp"] = Job(
        "mlp", os.path.join(ROOT, "bench", "training", "mlp.pbtxt"), 60, 10,
        lambda metrics: [sys.executable, os.path.join(HERE, "pytorch_mlp_steps.py"),
                         "--steps", "60", "--metrics-out", metrics])
    charlm_path = os.path.join(CHARLM, "charlm.pbtxt")
    jobs["charlm"] = Job(
        "charlm", charlm_path, 30, 3,
        lambda metrics: [sys.executable, os.path.join(CHARLM, "torch_reference.py"),
                         "--job", charlm_path, "--steps", "30", "--threads", "1",
                         "--print-every", "1000", "--metrics-out", metrics])
    if "gpt3" in names:
        gpt_dir = os.path.join(out_dir, "gpt3")
        os.makedirs(os.path.join(gpt_dir, "data"), exist_ok=True)
        link = os.path.join(gpt_dir, "data", "licenses.txt")
        if not os.path.exists(link):
            os.symlink(data, link)
        gpt_path = os.path.join(gpt_dir, "gpt3.pbtxt")
        subprocess.run([sys.executable, os.path.join(CHARLM, "make_job.py"), "--embed", "160",
                        "--heads", "5", "--context", "48", "--layers", "3", "--steps", "30",
                        "--output", gpt_path], check=True, stdout=subprocess.DEVNULL)
        jobs["gpt3"] = Job(
            "gpt3", gpt_path, 30, 3,
            lambda metrics: [sys.executable, os.path.join(CHARLM, "torch_reference.py"),
                             "--job", gpt_path, "--steps", "30", "--threads", "1",
                             "--print-every", "1000", "--metrics-out", metrics])
    return [jobs[name] for name in names]


def median_step_seconds(metrics_path, warmup):
    steps, _ = softwire_metrics.read_records(metrics_path)
    seconds = [float(record["seconds"]) for record in steps[warmup:] if "seconds" in record]
    if not seconds:
        raise ValueError(f"{metrics_path}: no step times after the first {warmup}")
    return statistics.median(seconds)


def run_softwire(binary, flags, job, scratch):
    metrics = os.path.join(scratch, f"{job.name}.softwire.jsonl")
    command = [binary, "run", job.path, "--steps", str(job.steps), "--metrics-out", metrics] + flags
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, timeout=600)
    return median_step_seconds(metrics, job.warmup)


def run_pytorch(job, scratch):
    metrics = os.path.join(scratch, f"{job.name}.pytorch.jsonl")
    environment = dict(os.environ, **PYTORCH_SETTING)
    subprocess.run(job.torch_command(metrics), check=True, stdout=subprocess.DEVNULL,
                   env=environment, timeout=600)
    return median_step_seconds(metrics, job.warmup)


def summarize(times):
    return {"runs_ms": [round(t * 1e3, 2) for t in times],
            "median_ms": round(statistics.median(times) * 1e3, 2),
            "fastest_ms": round(min(times) * 1e3, 2),
            "spread": round(max(times) / min(times), 3)}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--softwire", default=os.path.join(ROOT, "build", "cli", "softwire"))
    parser.add_argument("--pinned", action="store_true",
                        help="also run softwire with --pin-threads, alternating")
    parser.add_argument("--baseline", help="also run this softwire binary, alternating")
    parser.add_argument("--jobs", default="mlp,charlm,gpt3")
    parser.add_argument("--peer", action="store_true", help="also run PyTorch, alternating")
    parser.add_argument("--json", help="write the results here")
    arguments = parser.parse_args(argv)

    print(f"cpu: {cpu_model()} ({os.cpu_count()} cores; {' '.join(cpu_flags()) or 'no avx2'})")
    out_dir = os.path.join(ROOT, "out", "spread")
    jobs = prepare_jobs(arguments.jobs.split(","), out_dir)
    engines = {"softwire": (arguments.softwire, [])}
    if arguments.pinned:
        engines["pinned"] = (arguments.softwire, ["--pin-threads"])
    if arguments.baseline:
        engines["baseline"] = (arguments.baseline, [])
    if arguments.peer:
        engines["pytorch"] = None
    times = {(job.name, engine): [] for job in jobs for engine in engines}
    with tempfile.TemporaryDirectory() as scratch:
        for run in range(arguments.runs):
            for job in jobs:
                for engine in engines:
                    seconds = (run_pytorch(job, scratch) if engines[engine] is None
                               else run_softwire(*engines[engine], job, scratch))
                    times[(job.name, engine)].append(seconds)
                    print(f"run {run + 1:2d}  {job.name:7s} {engine:8s} {seconds * 1e3:8.2f} ms",
                          flush=True)
    results = {}
    print()
    print(f"{'job':7s} {'engine':8s} {'median':>9s} {'fastest':>9s} {'spread':>7s}  runs (ms)")
    for job in jobs:
        for engine in engines:
            summary = summarize(times[(job.name, engine)])
            results.setdefault(job.name, {})[engine] = summary
            runs = " ".join(f"{t:.1f}" for t in sorted(summary["runs_ms"]))
            print(f"{job.name:7s} {engine:8s} {summary['median_ms']:8.2f}ms "
                  f"{summary['fastest_ms']:8.2f}ms {summary['spread']:6.3f}x  {runs}")
    if arguments.json:
        with open(arguments.json, "w") as output:
            json.dump({"cpu": cpu_model(), "runs": arguments.runs, "jobs": results}, output,
                      indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
