#!/usr/bin/python3
"""Checks softwire's fashion steps: against NumPy, against PyTorch, and on 2 devices.

Usage: demos/fashion/check_steps.py --softwire build/cli/softwire [--job fashion.pbtxt]
                                    [--data DIR] [--steps 4] [--numpy] [--dp] [--torch]
                                    [--evaluation]
                                    [--tolerance 1e-5]

Copies the job into a temporary directory with data: prepare.py's files from --data, or (the
default, so CTest needs neither the data package nor its 200 MB) 512 synthetic images of the
real shape, pixels N(0, 1) and labels uniform in 0-9. Then, for the checks asked for:
  --numpy  step 0's loss of `softwire run JOB` equals model.py's float64 forward pass of
           micro-batch 0 (the NpyDataset's permutation, the job's initial values, batch
           statistics): step 0 is computed before any update, so only float32 rounding
           separates them (relative --tolerance).
  --dp     the losses of every step on 2 devices, data parallel (`--cluster 2cpu --dp 2`),
           equal those of 1 device to rounding (relative --tolerance). Under data parallelism
           each device's batch_norm normalises over its half of the batch (docs/OPS.md), so
           the 1-device run is the same job with micro-batches of half the size, two per step
           (`--micro-batches 2`): the same images, the same groups, the same updates.
  --evaluation  softwire's evaluation mode (evaluate.py --engine: a forward-only job, so
           batch_norm normalises with the running statistics) gives model.py's evaluation-mode
           loss and accuracy on 500 images, with running statistics away from 0 and 1.
  --torch  reference.py (PyTorch) trains the same steps from the same values on the same
           batches: step 0 within --tolerance, later steps within 10 times it (the updates'
           rounding differs). Exits 77 (CTest's skip) when python3-torch is missing.
Prints one line per check and exits 1 when one fails. Run by CTest as fashion_steps_test
(--numpy --dp --evaluation) and fashion_reference_test (--torch); scripts/demo fashion runs --dp on the
real data.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import evaluate  # noqa: E402
import make_job  # noqa: E402
import model  # noqa: E402
import softwire_metrics  # noqa: E402
import softwire_random  # noqa: E402

SKIP = 77


def relative_differences(got, expected):
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    return np.abs(got - expected) / np.maximum(np.abs(expected), 1e-12)


def write_synthetic_data(directory, count=512):
    rng = np.random.default_rng(2024)
    os.makedirs(directory, exist_ok=True)
    np.save(os.path.join(directory, "train_x.npy"),
            rng.standard_normal((count, 1, 28, 28)).astype(np.float32))
    np.save(os.path.join(directory, "train_y.npy"), rng.integers(0, 10, count).astype(np.int32))


def softwire_losses(softwire, job, steps, scratch, name, flags=()):
    metrics = os.path.join(scratch, name + ".json")
    command = [softwire, "run", job, "--steps", str(steps), "--quiet", "--metrics-out",
               metrics, *flags]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"check_steps.py: {' '.join(command)} failed:\n{result.stderr}")
    return [loss for _, loss in softwire_metrics.read_losses(metrics)]


def check_numpy(softwire_first, job, data, tolerance):
    config = model.read_job_config(job)
    labels = np.load(os.path.join(data, "train_y.npy"))
    images = np.load(os.path.join(data, "train_x.npy"), mmap_mode="r")
    samples = softwire_random.npy_samples(config["data_seed"], True, len(labels),
                                          np.arange(config["batch"]))
    values = model.forward(model.initial_variables(config), images[samples], labels[samples],
                           config, training=True, dtype=np.float64)
    expected = float(values["loss"])
    difference = relative_differences([softwire_first], [expected])[0]
    ok = difference <= tolerance
    print(f"step 0 loss: softwire {softwire_first:.7f}, NumPy (float64) {expected:.7f}, "
          f"relative difference {difference:.1e} (tolerance {tolerance:g}): "
          f"{'yes' if ok else 'NO'}")
    return ok


def check_dp(softwire, job, steps, scratch, tolerance):
    config = model.read_job_config(job)
    if config["batch"] % 2:
        sys.exit(f"check_steps.py: batch {config['batch']} does not split over 2 devices")
    half = dict(config, batch=config["batch"] // 2)
    half_job = os.path.join(os.path.dirname(job), "fashion_half_batch.pbtxt")
    with open(half_job, "w") as stream:
        stream.write(make_job.make_job(half))
    one = softwire_losses(softwire, half_job, steps, scratch, "one_device",
                          ["--micro-batches", "2"])
    two = softwire_losses(softwire, job, steps, scratch, "two_devices",
                          ["--cluster", "2cpu", "--dp", "2"])
    difference = float(relative_differences(two, one).max())
    ok = len(one) == len(two) == steps and difference <= tolerance
    print(f"the losses of steps 1-{steps} on 2 devices (data parallel, --cluster 2cpu --dp 2) "
          f"are those of 1 device to rounding: {'yes' if ok else 'NO'} (largest relative "
          f"difference {difference:.1e}, tolerance {tolerance:g}; 1 device: "
          f"{', '.join(f'{v:.5f}' for v in one[:4])}{', ...' if steps > 4 else ''})")
    return ok


def check_evaluation(softwire, job, data, scratch, tolerance):
    config = model.read_job_config(job)
    rng = np.random.default_rng(11)
    variables = model.initial_variables(config)
    directory = os.path.join(scratch, "evaluation_variables")
    os.makedirs(directory)
    for name, value in variables.items():
        if name.endswith("running_mean"):
            value = value + rng.normal(0, 0.5, value.shape)
        elif name.endswith("running_var"):
            value = value * rng.uniform(0.5, 2.0, value.shape)
        elif name.endswith(".w") or name.endswith(".b"):
            value = value + rng.normal(0, 0.05, value.shape)
        variables[name] = value.astype(np.float32)
        np.save(os.path.join(directory, name + ".npy"), variables[name])
    count = 500
    images = np.load(os.path.join(data, "train_x.npy"), mmap_mode="r")[:count]
    labels = np.load(os.path.join(data, "train_y.npy"))[:count].astype(np.int64)
    test = os.path.join(scratch, "test_data")
    os.makedirs(test)
    np.save(os.path.join(test, "test_x.npy"), np.asarray(images))
    np.save(os.path.join(test, "test_y.npy"), labels.astype(np.int32))
    values = model.forward(variables, images, labels, config, training=False, dtype=np.float64)
    accuracy, loss, _ = evaluate.engine_accuracy(softwire, config, directory, test, count)
    difference = relative_differences([loss], [values["loss"]])[0]
    ok = difference <= tolerance and abs(accuracy - values["accuracy"]) < 0.5 / count
    print(f"evaluation mode on {count} images: softwire loss {loss:.6f} accuracy "
          f"{accuracy:.3f}, NumPy (running statistics) {float(values['loss']):.6f} "
          f"{float(values['accuracy']):.3f}, relative difference {difference:.1e}: "
          f"{'yes' if ok else 'NO'}")
    return ok


def check_torch(softwire_steps, job, data, steps, scratch, tolerance):
    metrics = os.path.join(scratch, "torch.json")
    environment = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    subprocess.run([sys.executable, os.path.join(HERE, "reference.py"), "--job", job,
                    "--data", data, "--steps", str(steps), "--metrics-out", metrics,
                    "--print-every", str(10 ** 6)], check=True, stdout=subprocess.DEVNULL,
                   env=environment)
    reference = [loss for _, loss in softwire_metrics.read_losses(metrics)]
    differences = relative_differences(softwire_steps, reference)
    ok = bool(differences[0] <= tolerance and np.all(differences <= 10 * tolerance))
    print(f"PyTorch reference over {steps} steps: step 0 relative difference "
          f"{differences[0]:.1e} (tolerance {tolerance:g}), largest {differences.max():.1e} "
          f"(tolerance {10 * tolerance:g}): {'yes' if ok else 'NO'}")
    for step, (got, expected) in enumerate(zip(softwire_steps, reference)):
        print(f"  step {step}: softwire {got:.7f}  PyTorch {expected:.7f}")
    return ok


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--softwire", required=True)
    parser.add_argument("--job", default=os.path.join(HERE, "fashion.pbtxt"))
    parser.add_argument("--data", help="prepare.py's folder (default: synthetic images)")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--tolerance", type=float, default=1e-5)
    parser.add_argument("--numpy", action="store_true")
    parser.add_argument("--dp", action="store_true")
    parser.add_argument("--torch", action="store_true")
    parser.add_argument("--evaluation", action="store_true")
    arguments = parser.parse_args(argv)
    if not (arguments.numpy or arguments.dp or arguments.torch or arguments.evaluation):
        parser.error("ask for at least one of --numpy, --dp, --torch, --evaluation")
    if arguments.torch:
        try:
            import torch  # noqa: F401
        except ImportError:
            print("check_steps.py: SKIPPED the PyTorch comparison: python3-torch is not "
                  "installed (scripts/install-deps --with-peers)")
            return SKIP

    ok = True
    with tempfile.TemporaryDirectory(prefix="fashion_check_") as scratch:
        job = os.path.join(scratch, "fashion.pbtxt")
        shutil.copy(arguments.job, job)
        data = os.path.join(scratch, "data")
        if arguments.data:
            os.makedirs(data)
            for name in ("train_x.npy", "train_y.npy"):
                os.symlink(os.path.abspath(os.path.join(arguments.data, name)),
                           os.path.join(data, name))
        else:
            write_synthetic_data(data)
        if arguments.numpy or arguments.torch:
            steps = softwire_losses(arguments.softwire, job, arguments.steps, scratch,
                                    "softwire")
            if arguments.numpy:
                ok &= check_numpy(steps[0], job, data, arguments.tolerance)
            if arguments.torch:
                ok &= check_torch(steps, job, data, arguments.steps, scratch,
                                  arguments.tolerance)
        if arguments.evaluation:
            ok &= check_evaluation(arguments.softwire, job, data, scratch, arguments.tolerance)
        if arguments.dp:
            ok &= check_dp(arguments.softwire, job, arguments.steps, scratch,
                           arguments.tolerance)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
