#!/usr/bin/python3
"""Per-op-type kernel time per step from softwire traces (softwire run --trace FILE).

Usage: bench/conv/op_times.py TRACE [TRACE ...]

For each trace, sums the durations of the compute actors' firings by their op type, per step,
and prints each op type's median over the steps after the first (oneDNN makes its primitives in
the first), in ms per step, busiest first; with several traces, one column each, in the order
given, and the total of all compute firings. Durations are wall-clock per firing: on a loaded
machine compare traces recorded alternately, and read ratios rather than absolute times.
"""

import collections
import json
import statistics
import sys


def op_times(path):
    with open(path) as handle:
        trace = json.load(handle)
    per_step = collections.defaultdict(lambda: collections.defaultdict(float))
    for event in trace["traceEvents"]:
        if event.get("ph") != "X" or event.get("cat") != "compute":
            continue
        args = event["args"]
        per_step[args["op"]][args["step"]] += event["dur"] / 1000.0
    steps = max((s for op in per_step.values() for s in op), default=0) + 1
    times = {}
    for op, by_step in per_step.items():
        values = [by_step.get(step, 0.0) for step in range(1, steps)] or [by_step.get(0, 0.0)]
        times[op] = statistics.median(values)
    return times


def main():
    paths = sys.argv[1:]
    if not paths:
        sys.stderr.write(__doc__)
        return 2
    tables = [op_times(path) for path in paths]
    ops = sorted({op for table in tables for op in table}, key=lambda op: -tables[0].get(op, 0))
    width = max(len(op) for op in ops) + 2
    print("op".ljust(width) + "".join(f"{'trace ' + str(i + 1):>12}" for i in range(len(paths))))
    for op in ops:
        print(op.ljust(width) + "".join(f"{table.get(op, 0):12.1f}" for table in tables))
    print("total".ljust(width) + "".join(f"{sum(table.values()):12.1f}" for table in tables))
    for i, path in enumerate(paths):
        print(f"trace {i + 1}: {path} (ms per step, median over steps 1..)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
