"""One `softwire run` of a job as the comparison scripts need it: its per-step metrics and the
user CPU time the process took (bench/memory/*_cost.py, bench/trace/tracing_cost.py)."""

import json
import os
import subprocess


def run_metrics(softwire, job, steps, metrics, extra, cwd):
    """Runs `softwire run JOB --steps N --quiet --metrics-out METRICS EXTRA...` in `cwd` and
    returns (the metrics records, one per step, and the process's user CPU seconds). Raises
    RuntimeError naming the job and flags when the run fails."""
    child = subprocess.Popen([softwire, "run", job, "--steps", str(steps), "--quiet",
                              "--metrics-out", metrics] + list(extra), cwd=cwd,
                             stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if status != 0:
        raise RuntimeError(f"softwire run {job} {' '.join(extra)} failed: status {status}")
    with open(metrics) as lines:
        return [json.loads(line) for line in lines], usage.ru_utime
