#!/usr/bin/python3
"""Test accuracy of a trained fashion ResNet, computed with NumPy from the saved variables.

Usage: demos/fashion/evaluate.py --variables DIR [--job demos/fashion/fashion.pbtxt]
                                 [--data DIR] [--metrics FILE] [--json FILE]
                                 [--random-init] [--limit N] [--engine SOFTWIRE]

DIR holds one .npy per variable as `softwire run fashion.pbtxt --save DIR` (or reference.py
--save) writes them, the batch_norm running statistics included. The forward pass is
model.py's in evaluation mode: every batch_norm normalises with its running statistics, as
PyTorch's eval mode does, so an image's class does not depend on the others in its batch.
Reports the accuracy and mean cross-entropy over the 10,000 test images prepare.py wrote
(data/test_x.npy, data/test_y.npy) and the accuracy per class; with --metrics, the training
loss at the first and last steps. --random-init evaluates the job's initial values instead.
--engine SOFTWIRE also runs the engine's evaluation mode, a forward-only job over the test
images whose variables are read from DIR (make_job.make_evaluation_job: batch_norm then uses
the running statistics), and reports its accuracy beside NumPy's.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import make_job  # noqa: E402
import model  # noqa: E402
import softwire_metrics  # noqa: E402

CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
           "Sneaker", "Bag", "Ankle boot")


def predict(variables, images, config, batch=250):
    """Logits [N, 10] (float32 arithmetic) of the images, in evaluation mode."""
    logits = []
    for begin in range(0, len(images), batch):
        chunk = images[begin:begin + batch]
        values = model.forward(variables, chunk, np.zeros(len(chunk), dtype=np.int64), config,
                               training=False, dtype=np.float32)
        logits.append(values["logits"].astype(np.float64))
    return np.concatenate(logits) if logits else np.zeros((0, len(CLASSES)))


def evaluate(logits, labels):
    """(accuracy, mean cross-entropy, per-class accuracy list)."""
    predicted = logits.argmax(axis=1)
    per_class = [float(np.mean(predicted[labels == c] == c)) if np.any(labels == c) else
                 float("nan") for c in range(len(CLASSES))]
    loss = float(np.mean(model.cross_entropy(logits, labels)))
    return float(np.mean(predicted == labels)), loss, per_class


def engine_accuracy(softwire, config, variables_dir, data, count, batch=250):
    """(accuracy, loss, images) of softwire's forward-only run over the first `count` test
    images."""
    if count % batch:
        batch = math.gcd(count, batch)
    with tempfile.TemporaryDirectory(prefix="fashion_evaluation_") as scratch:
        job = os.path.join(scratch, "evaluation.pbtxt")
        with open(job, "w") as stream:
            stream.write(make_job.make_evaluation_job(
                config, variables_dir, os.path.abspath(os.path.join(data, "test_x.npy")),
                os.path.abspath(os.path.join(data, "test_y.npy")), batch))
        metrics = os.path.join(scratch, "metrics.json")
        subprocess.run([softwire, "run", job, "--steps", str(count // batch), "--quiet",
                        "--metrics-out", metrics], check=True)
        steps, _ = softwire_metrics.read_records(metrics)
    return (float(np.mean([step["accuracy"] for step in steps])),
            float(np.mean([step["output:loss"]  # "loss" is the training loss's key.
                           for step in steps])), len(steps) * batch)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variables", help="folder of the saved .npy variables")
    parser.add_argument("--job", default=os.path.join(HERE, "fashion.pbtxt"))
    parser.add_argument("--data", help="prepare.py's folder (default: data/ beside the job)")
    parser.add_argument("--metrics", help="softwire run --metrics-out FILE of the training")
    parser.add_argument("--json", help="also write the results here as JSON")
    parser.add_argument("--random-init", action="store_true",
                        help="evaluate the job's initial values instead of --variables")
    parser.add_argument("--limit", type=int, help="evaluate only the first N test images")
    parser.add_argument("--engine", metavar="SOFTWIRE",
                        help="also evaluate with this softwire binary (forward-only job)")
    arguments = parser.parse_args(argv)
    if not arguments.variables and not arguments.random_init:
        parser.error("--variables DIR or --random-init is required")

    config = model.read_job_config(arguments.job)
    data = arguments.data or os.path.join(os.path.dirname(os.path.abspath(arguments.job)),
                                          "data")
    if arguments.random_init:
        variables = model.initial_variables(config)
    else:
        variables = model.load_variables(arguments.variables, config)
    images = np.load(os.path.join(data, "test_x.npy"))
    labels = np.load(os.path.join(data, "test_y.npy")).astype(np.int64)
    if arguments.limit:
        images, labels = images[:arguments.limit], labels[:arguments.limit]
    started = time.perf_counter()
    accuracy, loss, per_class = evaluate(predict(variables, images, config), labels)
    seconds = time.perf_counter() - started
    summary = {"test_accuracy": accuracy, "test_loss": loss, "test_images": len(labels),
               "per_class_accuracy": dict(zip(CLASSES, per_class))}
    if arguments.metrics:
        steps = softwire_metrics.read_losses(arguments.metrics)
        first, last, window = softwire_metrics.first_and_last(steps)
        summary.update({"steps": len(steps), "first_loss": first, "last_loss": last})
        print(f"training loss {first:.3f} -> {last:.3f} over {len(steps)} steps (step 1, then "
              f"the mean of the last {window})")
    print("per class: " + ", ".join(f"{name} {value * 100:.0f}%"
                                     for name, value in zip(CLASSES, per_class)))
    print(f"test accuracy {accuracy * 100:.2f}% on {len(labels)} test images (test loss "
          f"{loss:.3f}; chance 10%, loss {math.log(10):.2f}; NumPy took {seconds:.0f} s)")
    if arguments.engine and not arguments.random_init:
        started = time.perf_counter()
        engine, engine_loss, count = engine_accuracy(arguments.engine, config, arguments.variables, data,
                                        len(labels))
        summary.update({"engine_test_accuracy": engine, "engine_test_loss": engine_loss})
        print(f"softwire's evaluation mode (a forward-only job, running statistics): "
              f"{engine * 100:.2f}% on {count} test images (test loss {engine_loss:.3f}; "
              f"{time.perf_counter() - started:.0f} s)")
    if arguments.json:
        with open(arguments.json, "w") as stream:
            json.dump(summary, stream, indent=2)
            stream.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
