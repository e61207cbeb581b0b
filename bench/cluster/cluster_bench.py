#!/usr/bin/python3
"""The pipeline-parallel MLP on 2 namespace nodes with shaped links: measured step time
against `softwire simulate`'s prediction for the same cluster (bench/cluster/README.md).

For each link rate a cluster, `scripts/cluster up 2 --netns --link-rate RATE`, all up at
once; then R rounds, each a calibration run (`softwire run` of the job on one 1-core cpu
device, traced: the rate of its matmul kernels is the cost model's FLOP/s for this cpu,
measured in the same sitting) followed by the job submitted to each cluster (pp 2). The prediction simulates the 2-node cluster spec
with that rate and the link's bandwidth as one TCP stream between the two namespaces carries it
in the same round (the nominal rate's payload is printed beside it). The job's ops are pinned to the stages the server
chooses for its nodes (fc1, fc1_bias, relu1 | the rest), so the plan simulated is the plan run:
the server does not know the links' bandwidth, and at 1 Gbit/s placement would otherwise cut
the graph elsewhere in the simulation than on the nodes.
Needs root (network namespaces); prints why and exits 77 where they are not permitted.
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
from machine import cpu_model  # noqa: E402
JOB = os.path.join(ROOT, "bench", "training", "mlp.pbtxt")
# TCP payload per Ethernet frame on a 1500-byte MTU with TCP timestamps (what tbf counts is
# the 1514-byte frame without its FCS): the share of the line rate a tensor's bytes can use.
PAYLOAD_SHARE = 1448 / 1514
# FLOPs of one firing of each matmul of the MLP (forward, grad_a, grad_b alike) on a
# micro-batch of 256: 2 x 256 x K x N.
MATMUL_FLOPS = {"fc1": 2 * 256 * 784 * 1024, "fc2": 2 * 256 * 1024 * 1024, "fc3": 2 * 256 * 1024 * 10}


def run(args, env=None, timeout=300):
    done = subprocess.run(args, env=env, timeout=timeout, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s" % (" ".join(args), done.returncode, done.stdout))
    return done.stdout


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def rate_bits(rate):
    m = re.fullmatch(r"(\d+)([kmgt]?)bit", rate)
    if not m:
        raise ValueError("rate '%s': use NUMBER[k|m|g|t]bit" % rate)
    return int(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[m.group(2)]


def device(flops=None):
    return ('device { name: "cpu:0" kind: DEVICE_KIND_CPU cores: 1%s }'
            % ("" if flops is None else " flops: %.6g" % flops))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def steady_seconds(metrics, skip):
    """The median per-step seconds of a --metrics-out file, after the first `skip` steps."""
    with open(metrics) as f:
        seconds = [json.loads(line)["seconds"] for line in f if line.strip()]
    return statistics.median(seconds[skip:])


def matmul_rate(trace, skip):
    """FLOP/s of the matmul kernels of a --trace file, over the steps from `skip` on."""
    with open(trace) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    flops = seconds = 0.0
    for e in events:
        args = e.get("args", {})
        if e.get("ph") != "X" or args.get("op") != "matmul" or args.get("step", 0) < skip:
            continue
        flops += MATMUL_FLOPS[e["name"].split(".")[0]]
        seconds += e["dur"] / 1e6
    return flops / seconds


RECEIVER = r"""
import socket, sys, time
server = socket.socket()
server.bind((sys.argv[1], 0))
server.listen(1)
print(server.getsockname()[1], flush=True)
connection, _ = server.accept()
total, first = 0, None
while True:
    data = connection.recv(1 << 20)
    if not data:
        break
    if first is None:
        first = time.perf_counter()
    total += len(data)
print(total, time.perf_counter() - first, flush=True)
"""
SENDER = r"""
import socket, sys
connection = socket.create_connection((sys.argv[1], int(sys.argv[2])))
chunk = bytes(1 << 20)
for _ in range(int(sys.argv[3])):
    connection.sendall(chunk)
connection.close()
"""


def netns_env(cluster_dir):
    values = {}
    with open(os.path.join(cluster_dir, "netns.env")) as f:
        for line in f:
            key, _, value = line.strip().partition("=")
            if key:
                values[key] = value
    return values


def link_rate(cluster_dir, nominal_bytes_per_s, repeats=3):
    """Bytes/s of one TCP stream from node0's namespace to node1's over the shaped path (the
    data plane's one ordered stream per direction): the median of `repeats` transfers of 1 MiB
    writes, each about half a second at the nominal rate (at least 64 MiB), timed by the
    receiver from its first byte to the last."""
    ns = netns_env(cluster_dir)
    mib = max(64, int(nominal_bytes_per_s * 0.5 / (1 << 20)))
    rates = []
    for _ in range(repeats):
        receiver = subprocess.Popen(["ip", "netns", "exec", ns["NETNS_NAMESPACE_1"], sys.executable,
                                     "-c", RECEIVER, ns["NETNS_ADDRESS_1"]],
                                    stdout=subprocess.PIPE, text=True)
        try:
            port = receiver.stdout.readline().strip()
            run(["ip", "netns", "exec", ns["NETNS_NAMESPACE_0"], sys.executable, "-c", SENDER,
                 ns["NETNS_ADDRESS_1"], port, str(mib)], timeout=120)
            total, seconds = receiver.stdout.readline().split()
            rates.append(int(total) / float(seconds))
        finally:
            receiver.kill()
            receiver.wait()
    return statistics.median(rates)


def pinned_job(path):
    """mlp.pbtxt with every op pinned to its stage: fc1, fc1_bias, relu1 on 0, the rest on 1."""
    with open(JOB) as f:
        text = f.read()
    stage0 = {"fc1", "fc1_bias", "relu1"}
    text = re.sub(r'(op \{\s*name: "([^"]+)")',
                  lambda m: "%s stage: %d" % (m.group(1), 0 if m.group(2) in stage0 else 1), text)
    return write(path, text)


def simulate(softwire, job, cluster, pp, micro_batches, steps):
    out = run([softwire, "simulate", job, "--cluster", cluster, "--pp", str(pp),
               "--micro-batches", str(micro_batches), "--steps", str(steps)])
    m = re.search(r"steady step ([0-9.]+) ms", out)
    if not m:
        raise RuntimeError("no steady step in simulate's output:\n" + out)
    return float(m.group(1)) / 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rates", default="1gbit,10gbit", help="link rates (tc's bit units)")
    parser.add_argument("--rounds", type=int, default=5, help="calibration + cluster run pairs")
    parser.add_argument("--micro-batches", type=int, default=4)
    parser.add_argument("--steps", type=int, default=12, help="steps of each cluster run")
    parser.add_argument("--calibration-steps", type=int, default=8)
    parser.add_argument("--skip", type=int, default=2, help="first steps left out of a median")
    parser.add_argument("--softwire", default=os.environ.get(
        "SOFTWIRE_BIN", os.path.join(ROOT, "build", "cli", "softwire")))
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    softwire = os.path.abspath(args.softwire)
    cluster_script = os.path.join(ROOT, "scripts", "cluster")

    check = subprocess.run([os.path.join(ROOT, "scripts", "cluster-netns"), "check"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check.returncode != 0:
        print("skipped: " + check.stdout.strip())
        return 77

    work = tempfile.mkdtemp(prefix="cluster-bench-")
    env = dict(os.environ, SOFTWIRE_BIN=softwire, SOFTWIRE_CLUSTER_DIR=os.path.join(work, "cluster"))
    node_spec = write(os.path.join(work, "node.pbtxt"), 'node { name: "n" %s }\n' % device())
    one = write(os.path.join(work, "one.pbtxt"), 'node { name: "node0" %s }\n' % device())
    m, pp = args.micro_batches, 2
    job = pinned_job(os.path.join(work, "mlp_pinned.pbtxt"))
    samples = m * 256

    # The simulated one-device step is a/F + b (FLOPs over the rate, bytes over the memory
    # bandwidth): two simulations give a and b, and a measured step time gives the rate F.
    t1 = simulate(softwire, JOB, write(os.path.join(work, "f1.pbtxt"),
                                  'node { name: "node0" %s }\n' % device(1e10)), 1, m, 4)
    t2 = simulate(softwire, JOB, write(os.path.join(work, "f2.pbtxt"),
                                  'node { name: "node0" %s }\n' % device(2e10)), 1, m, 4)
    a = 2 * (t1 - t2) * 1e10
    b = t1 - a / 1e10

    print("cpu: %s, %d cores online; load average %s" % (cpu_model(), os.cpu_count(), load()))
    print("job: bench/training/mlp.pbtxt pinned to 2 stages, pp %d, %d micro-batches of 256 "
          "(%d samples per step)" % (pp, m, samples))
    rates = args.rates.split(",")
    clusters = {}  # rate -> (environment, submit command)
    rounds = {rate: [] for rate in rates}
    try:
        # One cluster per rate, all up at once: every round measures each of them right after
        # the same calibration, so a change in the machine's load hits them alike.
        for rate in rates:
            cluster_env = dict(env, SOFTWIRE_CLUSTER_DIR=os.path.join(work, "cluster-" + rate))
            clusters[rate] = (cluster_env, None)
            out = run([cluster_script, "up", "2", "--netns", "--link-rate", rate,
                       "--devices", node_spec], env=cluster_env, timeout=120)
            address = out.strip().splitlines()[-1]
            with open(os.path.join(cluster_env["SOFTWIRE_CLUSTER_DIR"], "client.flags")) as f:
                client = f.read().split()
            submit = [softwire, "submit", job, "--to", address] + client + [
                "--pp", str(pp), "--micro-batches", str(m)]
            clusters[rate] = (cluster_env, submit)
            run(submit + ["--steps", "3"])  # Warm-up: the connections and the pages.
            print("links shaped to %s (tbf, both ends of each veth): server %s" % (rate, address))
        for r in range(args.rounds):
            calibration = os.path.join(work, "calibration-%d" % r)
            run([softwire, "run", JOB, "--cluster", one, "--micro-batches", str(m),
                 "--steps", str(args.calibration_steps), "--metrics-out",
                 calibration + ".jsonl", "--trace", calibration + ".json"])
            one_device = steady_seconds(calibration + ".jsonl", args.skip)
            alone_flops = matmul_rate(calibration + ".json", args.skip)
            step_flops = a / (one_device - b)
            # The same calibration on every core at once, as the pipeline's stages run: each
            # stage's matmuls then share the machine's caches and memory bandwidth (and, on a
            # VM, perhaps a physical core) with the other's. Its rate is the headline's.
            together = [subprocess.Popen(
                [softwire, "run", JOB, "--cluster", one, "--micro-batches", str(m), "--steps",
                 str(args.calibration_steps), "--quiet", "--trace",
                 "%s-together-%d.json" % (calibration, k)],
                stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT) for k in range(pp)]
            for process in together:
                if process.wait(timeout=300) != 0:
                    raise RuntimeError("a concurrent calibration run failed")
            kernel_flops = statistics.mean(
                matmul_rate("%s-together-%d.json" % (calibration, k), args.skip)
                for k in range(pp))
            print("round %d: one device %.1f ms/step, its matmuls at %.1f GFLOP/s alone, %.1f "
                  "GFLOP/s with %d such runs at once (%.1f GFLOP/s from the step time); load %s"
                  % (r + 1, one_device * 1e3, alone_flops / 1e9, kernel_flops / 1e9, pp,
                     step_flops / 1e9, load()))
            for rate in rates:
                nominal = rate_bits(rate) / 8 * PAYLOAD_SHARE
                # The link as it carries one stream here, measured as the matmuls are: the
                # shaper sets it at 1 Gbit/s; at 10 Gbit/s the veth pair and the two vCPUs do.
                bandwidth = link_rate(clusters[rate][0]["SOFTWIRE_CLUSTER_DIR"], nominal)
                measured_file = os.path.join(work, "cluster-%s-%d.jsonl" % (rate, r))
                run(clusters[rate][1] + ["--steps", str(args.steps), "--metrics-out",
                                         measured_file])
                measured = steady_seconds(measured_file, args.skip)
                predicted = {}
                for name, flops, link in (("kernels", kernel_flops, bandwidth),
                                          ("alone", alone_flops, bandwidth),
                                          ("step", step_flops, bandwidth),
                                          ("nominal link", kernel_flops, nominal)):
                    spec = write(os.path.join(work, "two-%s-%d-%s.pbtxt" % (rate, r, name[0])),
                                 'node { name: "node0" %s }\nnode { name: "node1" %s }\n'
                                 'link { from: "node0" to: "node1" bandwidth: %.6g }\n'
                                 % (device(flops), device(flops), link))
                    predicted[name] = simulate(softwire, job, spec, pp, m, args.steps)
                error = (measured - predicted["kernels"]) / predicted["kernels"]
                step_error = (measured - predicted["step"]) / predicted["step"]
                nominal_error = (measured - predicted["nominal link"]) / predicted["nominal link"]
                alone_error = (measured - predicted["alone"]) / predicted["alone"]
                rounds[rate].append(dict(
                    one_device_s=one_device, kernel_flops=kernel_flops, step_flops=step_flops,
                    alone_flops=alone_flops, predicted_alone_s=predicted["alone"],
                    error_alone=alone_error,
                    link_bytes_per_s=bandwidth, nominal_bytes_per_s=nominal,
                    measured_s=measured, predicted_s=predicted["kernels"], error=error,
                    predicted_from_step_s=predicted["step"], error_from_step=step_error,
                    predicted_nominal_link_s=predicted["nominal link"],
                    error_nominal_link=nominal_error, load=load()))
                print("  %-7s link %.2f Gbit/s of payload (nominal %.2f); predicted %.1f ms, "
                      "measured %.1f ms: error %+.1f%%  (the matmuls' rate alone %+.1f%%; from "
                      "the step time %+.1f%%; with the nominal link %+.1f%%)"
                      % (rate, bandwidth * 8 / 1e9, nominal * 8 / 1e9, predicted["kernels"] * 1e3,
                         measured * 1e3, error * 100, alone_error * 100, step_error * 100,
                         nominal_error * 100))
    finally:
        for cluster_env, _ in clusters.values():
            subprocess.run([cluster_script, "down"], env=cluster_env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.STDOUT, timeout=120)
    results = []
    print()
    for rate in rates:
        measured = statistics.median(x["measured_s"] for x in rounds[rate])
        predicted = statistics.median(x["predicted_s"] for x in rounds[rate])
        median_error = statistics.median(x["error"] for x in rounds[rate])
        step_error = statistics.median(x["error_from_step"] for x in rounds[rate])
        nominal_error = statistics.median(x["error_nominal_link"] for x in rounds[rate])
        alone_error = statistics.median(x["error_alone"] for x in rounds[rate])
        link = statistics.median(x["link_bytes_per_s"] for x in rounds[rate])
        print("%s: link %.2f Gbit/s of payload (median); measured %.1f ms/step (median of %d), "
              "predicted %.1f ms (median); median error %+.1f%% (target within 5%%: %s); from "
              "the matmuls' rate alone: %+.1f%%; from the step time: %+.1f%%; with the nominal "
              "link: %+.1f%%; %.0f samples/s"
              % (rate, link * 8 / 1e9, measured * 1e3, len(rounds[rate]), predicted * 1e3,
                 median_error * 100, "met" if abs(median_error) <= 0.05 else "missed",
                 alone_error * 100, step_error * 100, nominal_error * 100, samples / measured))
        results.append(dict(rate=rate, bandwidth=rate_bits(rate) / 8 * PAYLOAD_SHARE,
                            link_bytes_per_s=link, rounds=rounds[rate], measured_s=measured,
                            predicted_s=predicted, median_error=median_error,
                            median_error_from_step=step_error,
                            median_error_nominal_link=nominal_error,
                            median_error_alone=alone_error))
    print("\nload average at the end: %s" % load())
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(cpu=cpu_model(), micro_batches=m, results=results), f, indent=1)
    subprocess.run(["rm", "-rf", work])
    return 0


if __name__ == "__main__":
    sys.exit(main())
