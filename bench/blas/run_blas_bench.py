#!/usr/bin/python3
"""Runs blas_bench for OpenBLAS and oneDNN at 1 and 2 threads, in interleaved rounds (one
process per library and thread count, so neither library's idle threads disturb the other),
and prints the median over rounds of each shape's GFLOP/s as a markdown table.

  bench/blas/run_blas_bench.py BUILD_DIR [--rounds=5] [--isa=native|avx2] [--wait_idle]
                               [--contend]

--isa=avx2 restricts both libraries to AVX2 + FMA kernels (OPENBLAS_CORETYPE=Haswell,
ONEDNN_MAX_CPU_ISA=AVX2), the instruction set of the CI machines in docs/MACHINE.md, when the
build machine also has AVX-512.

--contend runs one busy-looping process beside every measurement: one core's worth of other
work, as the engine's own threads (CAF workers, the device's runner) or a neighbour provide.

--wait_idle starts each round only once the machine's cores were all but idle for two seconds
(from /proc/stat), for shared machines where other jobs come and go.
"""
import os
import re
import statistics
import subprocess
import sys
import time

CONFIGS = [("openblas", 1), ("onednn", 1), ("openblas", 2), ("onednn", 2)]
LINE = re.compile(r"^(.*?)\s+([NT]{2})\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+) GFLOP/s$")
STEP = re.compile(r"^MLP step products\s+([\d.]+) ms$")


def run_once(binary, library, threads, isa, contend=False):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    if isa == "avx2":
        env.update(OPENBLAS_CORETYPE="Haswell", ONEDNN_MAX_CPU_ISA="AVX2")
    hog = None
    if contend:
        hog = subprocess.Popen(["/usr/bin/python3", "-c", "while True: pass"])
    try:
        output = subprocess.run([binary, f"--library={library}", f"--threads={threads}"],
                                env=env, check=True, capture_output=True, text=True).stdout
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    rates, step, header = {}, None, ""
    for line in output.splitlines():
        if line.startswith("#"):
            header = line
        elif match := LINE.match(line):
            name = f"{match.group(1).strip()} {match.group(2)} {match.group(3)}x{match.group(4)}x{match.group(5)}"
            rates[name] = float(match.group(6))
        elif match := STEP.match(line):
            step = float(match.group(1))
    return header, rates, step


def idle_cores(seconds=2.0):
    """Cores' worth of idle time over the next `seconds`, from /proc/stat."""
    def snapshot():
        with open("/proc/stat") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
        return fields[3] + fields[4], sum(fields)  # idle + iowait, total (in jiffies)
    idle0, total0 = snapshot()
    time.sleep(seconds)
    idle1, total1 = snapshot()
    cores = os.cpu_count()
    return cores * (idle1 - idle0) / max(1, total1 - total0)


def wait_until_idle():
    while idle_cores() < os.cpu_count() - 0.1:
        time.sleep(5)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = sys.argv[1]
    rounds, isa, wait_idle, contend = 5, "native", False, False
    for argument in sys.argv[2:]:
        if argument.startswith("--rounds="):
            rounds = int(argument.split("=")[1])
        elif argument.startswith("--isa="):
            isa = argument.split("=")[1]
        elif argument == "--wait_idle":
            wait_idle = True
        elif argument == "--contend":
            contend = True
    binary = os.path.join(build, "bench", "blas", "blas_bench")
    samples = {config: [] for config in CONFIGS}
    headers = {}
    for _ in range(rounds):
        for config in CONFIGS:
            if wait_idle:
                wait_until_idle()
            header, rates, step = run_once(binary, *config, isa, contend)
            headers[config] = header
            samples[config].append((rates, step))
    for config in CONFIGS:
        print(headers[config])
    shapes = list(samples[CONFIGS[0]][0][0].keys())
    columns = [f"{library} {threads}T" for library, threads in CONFIGS]
    print(f"\nmedian GFLOP/s of {rounds} rounds, isa {isa}"
          f"{', beside one busy process' if contend else ''}\n")
    print("| product | " + " | ".join(columns) + " |")
    print("| --- |" + " ---: |" * len(columns))
    for shape in shapes:
        cells = [f"{statistics.median(r[shape] for r, _ in samples[c]):.1f}" for c in CONFIGS]
        print(f"| {shape} | " + " | ".join(cells) + " |")
    cells = [f"{statistics.median(s for _, s in samples[c]):.2f} ms" for c in CONFIGS]
    print("| MLP step, all 8 products | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
