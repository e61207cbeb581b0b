#!/usr/bin/python3
"""The flagship transformer pipelined over 4 node processes against the same plan in one
process: samples/s side by side, and the pipeline bubble each trace measures beside the
formula's (bench/cluster/README.md).

Usage: bench/cluster/flagship_nodes.py [--rounds 5] [--steps 60] [--skip 5] [--json FILE]

A local cluster (`scripts/cluster up 4`: a server and 4 node agents of one cpu device each on
this host, the data plane through shared memory) stays up for the whole run. Each round, in
alternating order so both see the same machine noise:
  - nodes: `softwire submit demos/charlm/charlm.pbtxt --pp 4 --steps N --metrics-out F`;
  - one process: `softwire run demos/charlm/charlm.pbtxt --cluster 4x1cpu --pp 4 --steps N
    --metrics-out F`, the plan the server compiles for the 4 nodes (4 one-cpu devices).
A run's figure is the median of its steps' samples/s after the first `--skip`. After the
rounds, one traced run of each (steps 1-3 recorded: the warm-up step and two steady ones)
gives the bubble: the devices' idle share of the steady steps, its filling-and-draining part,
and (p-1)/(m+p-1) for p stages and m micro-batches (trace/trace_summary.h).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "common"))
from machine import cpu_model, load_average  # noqa: E402

JOB = os.path.join(ROOT, "demos", "charlm", "charlm.pbtxt")


def run(args, env=None, timeout=600):
    done = subprocess.run(args, env=env, timeout=timeout, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s" % (" ".join(args), done.returncode, done.stdout))
    return done.stdout


def samples_per_second(metrics, skip):
    with open(metrics) as lines:
        steps = [json.loads(line) for line in lines]
    return statistics.median(step["samples_per_second"] for step in steps[skip:])


def bubble(summary_file):
    with open(summary_file) as summary:
        text = summary.read()
    idle = re.search(r"the devices idled ([\d.]+)% of the steady .*?: ([\d.]+)% the pipeline "
                     r"filling and draining", text, re.S)
    formula = re.search(r"\(p-1\)/\(m\+p-1\) = ([\d.]+)% with p = (\d+) stages, m = (\d+)", text)
    if not idle or not formula:
        raise RuntimeError("no pipeline bubble in " + summary_file + ":\n" + text)
    return {"idle": float(idle.group(1)), "filling_draining": float(idle.group(2)),
            "formula": float(formula.group(1)), "stages": int(formula.group(2)),
            "micro_batches": int(formula.group(3))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--skip", type=int, default=5, help="first steps left out of a median")
    parser.add_argument("--softwire", default=os.environ.get(
        "SOFTWIRE_BIN", os.path.join(ROOT, "build", "cli", "softwire")))
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    softwire = os.path.abspath(args.softwire)
    if not os.path.exists(os.path.join(ROOT, "data", "licenses.txt")):
        run([sys.executable, os.path.join(ROOT, "demos", "charlm", "prepare.py")])
    work = tempfile.mkdtemp(prefix="flagship-nodes-bench-")
    env = dict(os.environ, SOFTWIRE_BIN=softwire, SOFTWIRE_CLUSTER_DIR=os.path.join(work, "cluster"))
    cluster = os.path.join(ROOT, "scripts", "cluster")
    print("cpu: %s, %d cores; load %.2f" % (cpu_model(), os.cpu_count(), load_average()))
    figures = {"nodes": [], "one_process": []}
    try:
        address = run([cluster, "up", "4"], env=env, timeout=120).strip().splitlines()[-1]
        client = []  # Only a --netns cluster has TLS and a token for its clients.
        flags_file = os.path.join(env["SOFTWIRE_CLUSTER_DIR"], "client.flags")
        if os.path.exists(flags_file):
            with open(flags_file) as flags:
                client = flags.read().split()
        submit = [softwire, "submit", JOB, "--to", address, "--pp", "4", "--quiet"] + client
        one = [softwire, "run", JOB, "--cluster", "4x1cpu", "--pp", "4", "--quiet"]
        run(submit + ["--steps", "3"])  # Warm-up: connections, pages, the data.
        print("cluster of 4 nodes at %s; %d rounds of %d steps, median samples/s after step %d"
              % (address, args.rounds, args.steps, args.skip))
        for r in range(args.rounds):
            order = ("nodes", "one_process") if r % 2 == 0 else ("one_process", "nodes")
            line = []
            for mode in order:
                metrics = os.path.join(work, "%s-%d.jsonl" % (mode, r))
                command = submit if mode == "nodes" else one
                run(command + ["--steps", str(args.steps), "--metrics-out", metrics])
                figures[mode].append(samples_per_second(metrics, args.skip))
                line.append("%s %.1f" % (mode.replace("_", " "), figures[mode][-1]))
            print("round %d: %s samples/s; ratio %.3f; load %.2f"
                  % (r + 1, ", ".join(line), figures["nodes"][-1] / figures["one_process"][-1],
                     load_average()), flush=True)
        # The bubble: one traced run of each, steps 1-3 recorded.
        traces = {}
        run(one + ["--steps", "12", "--trace", os.path.join(work, "one.json"),
                   "--trace-steps", "1:4"])
        traces["one_process"] = bubble(os.path.join(work, "one.json.summary.txt"))
        run(submit + ["--steps", "12", "--trace", "--trace-steps", "1:4"])
        job_id = run([softwire, "jobs", "--to", address] + client).splitlines()[1].split()[0]
        run([softwire, "fetch", job_id, "--to", address, "--trace",
             os.path.join(work, "nodes.json")] + client)
        traces["nodes"] = bubble(os.path.join(work, "nodes.json.summary.txt"))
    finally:
        subprocess.run([cluster, "down"], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.STDOUT, timeout=120)
    nodes = statistics.median(figures["nodes"])
    one_process = statistics.median(figures["one_process"])
    ratios = [n / o for n, o in zip(figures["nodes"], figures["one_process"])]
    print()
    print("samples/s, median of %d: 4 nodes %.1f, one process %.1f; nodes / one process %.3f "
          "(paired median %.3f, min %.3f, max %.3f)"
          % (args.rounds, nodes, one_process, nodes / one_process, statistics.median(ratios),
             min(ratios), max(ratios)))
    for mode in ("nodes", "one_process"):
        b = traces[mode]
        print("bubble, %s: idle %.1f%% of the steady steps, %.1f%% filling and draining; formula "
              "(p-1)/(m+p-1) = %.1f%% (p %d, m %d)"
              % (mode.replace("_", " "), b["idle"], b["filling_draining"], b["formula"],
                 b["stages"], b["micro_batches"]))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"cpu": cpu_model(), "samples_per_second": figures, "ratios": ratios,
                       "bubble": traces}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
