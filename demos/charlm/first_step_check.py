#!/usr/bin/python3
"""Checks softwire's first charlm step against a NumPy forward pass of the same batch.

Usage: demos/charlm/first_step_check.py --softwire build/cli/softwire [--job charlm.pbtxt]

Builds the corpus and a copy of the job in a temporary directory, runs
`softwire run JOB --steps 1 --metrics-out FILE`, and compares step 0's loss with the mean
cross-entropy model.py computes (float64) from the job's initial values (the NumPy port of
base/random.h) on micro-batch 0 (TextDataset's window offsets). Step 0's loss is computed
before any update, so the two must agree to float32 rounding: the tolerance, 1e-4 on a loss of
about 5.55, is ~20x the error of float32 sums over 2048 positions. Exits 1 on a mismatch.
Run by CTest as charlm_first_step_test.
"""

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import model  # noqa: E402
import softwire_metrics  # noqa: E402
import softwire_random  # noqa: E402

TOLERANCE = 1e-4


def numpy_first_loss(job, config):
    text = np.frombuffer(open(config["text_path"], "rb").read(), dtype=np.uint8)
    usable = int(math.floor(len(text) * config["train_fraction"]))
    t, b = config["context"], config["batch"]
    offsets = softwire_random.uniform_int_at(config["data_seed"], np.arange(b), usable - t)
    windows = text[:usable].astype(np.int64)[offsets[:, None] + np.arange(t + 1)]
    weights = model.initial_variables(job, config)
    logits = model.logits(windows[:, :-1], weights, config)
    return float(model.cross_entropy(logits, windows[:, 1:]).mean())


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--softwire", required=True)
    parser.add_argument("--job", default=os.path.join(HERE, "charlm.pbtxt"))
    arguments = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="charlm_check_") as scratch:
        job = os.path.join(scratch, "charlm.pbtxt")
        shutil.copy(arguments.job, job)
        subprocess.run([sys.executable, os.path.join(HERE, "prepare.py"), "--output",
                        os.path.join(scratch, "data", "licenses.txt")], check=True)
        metrics = os.path.join(scratch, "metrics.json")
        subprocess.run([arguments.softwire, "run", job, "--steps", "1", "--metrics-out",
                        metrics], check=True, stdout=subprocess.DEVNULL)
        softwire_loss = softwire_metrics.read_losses(metrics)[0][1]
        expected = numpy_first_loss(job, model.read_job_config(job))
    difference = abs(softwire_loss - expected)
    print(f"step 0 loss: softwire {softwire_loss:.7f}, NumPy {expected:.7f}, "
          f"difference {difference:.2e} (tolerance {TOLERANCE:g})")
    return 0 if difference <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
