#!/usr/bin/python3
"""The job service's cost: a job submitted over gRPC against the same job run in-process.

Usage: bench/service/service_bench.py [--softwire build/cli/softwire] [--repeats 5]
                                      [--steps 60] [--json FILE]

Starts one `softwire serve` on a free loopback port (its own state directory, removed after)
and, `--repeats` times, alternating so both see the same machine noise:
  - `softwire run bench/training/mlp.pbtxt --steps N --metrics-out F` (the peer), and
  - the same job submitted to the server from Python (clients/python, the foreign client),
    its step events followed.
Each run's speed is the median samples/s of its steps after the first five (the engine's own
step timing, the same numbers `--metrics-out` and the step events carry), and its wall time
from the start (process launch / SubmitJob call) to the last step.
Also, `--repeats` times: time from SubmitJob to the first step event of a small job (the
Python client's two-cluster classifier), and `softwire run`'s time from launch to its first
step for the same job.

Prints the CPU model, each repeat, the medians, and the ratio service / run of each repeat's
pair with its median (target for the MLP's samples/s: >= 0.98). Exit status 0 when every run finished.
"""

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "common"))
from machine import cpu_model  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "clients", "python"))

import example  # noqa: E402
import softwire_client  # noqa: E402

MLP = os.path.join(ROOT, "bench", "training", "mlp.pbtxt")
WARMUP = 5


def start_server(softwire, state_dir):
    process = subprocess.Popen([softwire, "serve", "--listen", "127.0.0.1:0", "--state-dir",
                                state_dir], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    found = {}
    ready = threading.Event()

    def read():
        for line in process.stdout:
            match = re.search(r"listening on (\S+)", line)
            if match and "address" not in found:
                found["address"] = match.group(1)
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(60) or "address" not in found:
        process.kill()
        raise RuntimeError("softwire serve did not start")
    return process, found["address"]


def steady_rate(rates):
    return statistics.median(rates[WARMUP:] if len(rates) > WARMUP else rates)


def run_in_process(softwire, job, steps, scratch):
    """`softwire run`: (median samples/s, wall seconds to the last step, seconds to step 0)."""
    metrics = os.path.join(scratch, "run_metrics.jsonl")
    started = time.monotonic()
    # A session of its own, as the server has: with the kernel's autogroup scheduling each
    # session shares the cores as one, so a server in its own session against a `run` in the
    # bench's would be measured with different shares of a busy machine.
    process = subprocess.Popen([softwire, "run", job, "--steps", str(steps), "--log-every", "1",
                                "--metrics-out", metrics], stdout=subprocess.PIPE, text=True,
                               start_new_session=True)
    first_step = None
    for line in process.stdout:
        if first_step is None and line.startswith("step"):
            first_step = time.monotonic() - started
    process.wait()
    wall = time.monotonic() - started
    if process.returncode != 0:
        raise RuntimeError("softwire run failed")
    with open(metrics) as lines:
        rates = [json.loads(line)["samples_per_second"] for line in lines if line.strip()]
    return steady_rate(rates), wall, first_step


def run_submitted(client, job_text, steps, data_files=None, file_name="job.pbtxt"):
    """Over gRPC: (median samples/s, wall seconds to the last step, seconds to step 0)."""
    started = time.monotonic()
    job, _ = client.submit(job_text, file_name=file_name, data_files=data_files, steps=steps)
    first_step = None
    rates = []
    for event in client.watch(job.job_id):
        kind = event.WhichOneof("kind")
        if kind == "step":
            if first_step is None:
                first_step = time.monotonic() - started
            rates.append(event.step.samples_per_second)
        elif kind in ("failed", "cancelled"):
            raise RuntimeError("submitted job ended %s" % kind)
    wall = time.monotonic() - started
    return steady_rate(rates), wall, first_step


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--softwire", default=os.path.join(ROOT, "build", "cli", "softwire"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--json")
    args = parser.parse_args()
    softwire = os.path.abspath(args.softwire)
    print("cpu: %s, %d cores" % (cpu_model(), os.cpu_count()))
    mlp_text = open(MLP).read()
    rows = {"run": [], "service": [], "small_run": [], "small_service": []}
    with tempfile.TemporaryDirectory() as scratch:
        stubs = softwire_client.generate_stubs(ROOT, os.path.join(scratch, "stubs"))
        server, address = start_server(softwire, os.path.join(scratch, "state"))
        try:
            client = softwire_client.JobClient(address, stubs)
            # The small job's data, written for `softwire run` and sent for the service.
            x, y = example.make_points()
            small_dir = os.path.join(scratch, "small")
            os.makedirs(os.path.join(small_dir, "data"))
            data = {"data/x.npy": example.npy_bytes(x), "data/y.npy": example.npy_bytes(y)}
            for path, content in data.items():
                with open(os.path.join(small_dir, path), "wb") as out:
                    out.write(content)
            small_job = os.path.join(small_dir, "two_clusters.pbtxt")
            with open(small_job, "w") as out:
                out.write(example.JOB_TEXT)
            for repeat in range(args.repeats):
                run = run_in_process(softwire, MLP, args.steps, scratch)
                served = run_submitted(client, mlp_text, args.steps, file_name="mlp.pbtxt")
                small_run = run_in_process(softwire, small_job, 10, scratch)
                small_served = run_submitted(client, example.JOB_TEXT, 10, data,
                                             "two_clusters.pbtxt")
                rows["run"].append(run)
                rows["service"].append(served)
                rows["small_run"].append(small_run)
                rows["small_service"].append(small_served)
                print("repeat %d: mlp run %.0f samples/s (%.2f s), service %.0f samples/s "
                      "(%.2f s); first step: run %.0f ms, service %.0f ms" %
                      (repeat, run[0], run[1], served[0], served[1], small_run[2] * 1e3,
                       small_served[2] * 1e3))
                sys.stdout.flush()
            client.close()
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(20)
            except subprocess.TimeoutExpired:
                server.kill()

    def median(name, index):
        return statistics.median(row[index] for row in rows[name])

    summary = {
        "cpu": cpu_model(),
        "mlp_samples_per_second": {"run": median("run", 0), "service": median("service", 0)},
        "mlp_wall_seconds": {"run": median("run", 1), "service": median("service", 1)},
        "first_step_seconds": {"run": median("small_run", 2),
                               "service": median("small_service", 2)},
    }
    # Each repeat's pair ran back to back, so the ratio is taken per pair and its median quoted:
    # a machine that slows for a few repeats slows both sides of those pairs.
    ratios = [served[0] / run[0] for run, served in zip(rows["run"], rows["service"])]
    ratio = statistics.median(ratios)
    summary["mlp_ratio_service_to_run"] = ratio
    summary["mlp_ratios"] = ratios
    print("pair ratios: %s" % " ".join("%.3f" % r for r in ratios))
    print("median of %d: mlp %.0f samples/s over gRPC vs %.0f in-process: median pair ratio "
          "%.3f (target >= 0.98); wall %.2f s vs %.2f s" %
          (args.repeats, summary["mlp_samples_per_second"]["service"],
           summary["mlp_samples_per_second"]["run"], ratio,
           summary["mlp_wall_seconds"]["service"], summary["mlp_wall_seconds"]["run"]))
    print("median submit -> first step event (small job): %.0f ms; softwire run launch -> "
          "first step: %.0f ms" % (summary["first_step_seconds"]["service"] * 1e3,
                                   summary["first_step_seconds"]["run"] * 1e3))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(summary, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
