#!/usr/bin/python3
"""Test accuracy of a trained digits MLP, computed with NumPy from the saved variables.

Usage: demos/digits/evaluate.py --variables DIR [--data demos/digits/data] [--metrics FILE]

DIR holds w1.npy, b1.npy, w2.npy, b2.npy as `softwire run digits.pbtxt --save DIR` writes
them. The forward pass is the job's: logits = relu(x @ w1 + b1) @ w2 + b2. With --metrics, the
summary adds the training loss and accuracy at the first and last step.
"""

import argparse
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import softwire_metrics  # noqa: E402

SHAPES = {"w1": (64, 128), "b1": (128,), "w2": (128, 10), "b2": (10,)}


def load_variables(directory):
    weights = {}
    for name, shape in SHAPES.items():
        path = os.path.join(directory, name + ".npy")
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path}: missing (softwire run --save DIR writes one .npy "
                                    "per variable)")
        weights[name] = np.load(path).astype(np.float64)
        if weights[name].shape != shape:
            raise ValueError(f"{path}: shape {weights[name].shape}, expected {shape}")
    return weights


def logits(x, weights):
    hidden = np.maximum(x @ weights["w1"] + weights["b1"], 0.0)
    return hidden @ weights["w2"] + weights["b2"]


def evaluate(weights, x, y):
    """(accuracy, mean cross-entropy) over the images x with labels y."""
    scores = logits(x.astype(np.float64), weights)
    top = scores.max(axis=1, keepdims=True)
    log_sum = np.log(np.exp(scores - top).sum(axis=1)) + top[:, 0]
    loss = float(np.mean(log_sum - scores[np.arange(len(y)), y]))
    return float(np.mean(scores.argmax(axis=1) == y)), loss


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variables", required=True)
    parser.add_argument("--data", default=os.path.join(HERE, "data"))
    parser.add_argument("--metrics")
    arguments = parser.parse_args(argv)

    weights = load_variables(arguments.variables)
    x = np.load(os.path.join(arguments.data, "test_x.npy"))
    y = np.load(os.path.join(arguments.data, "test_y.npy"))
    accuracy, loss = evaluate(weights, x, y)
    if arguments.metrics:
        steps = softwire_metrics.read_losses(arguments.metrics)
        first, last, window = softwire_metrics.first_and_last(steps)
        print(f"training loss {first:.2f} -> {last:.2f} over {len(steps)} steps (step 1, then "
              f"the mean of the last {window})")
    print(f"test accuracy {accuracy * 100:.1f}% on {len(y)} held-out images "
          f"(test loss {loss:.3f}; chance 10%, loss {math.log(10):.2f})")


if __name__ == "__main__":
    main(sys.argv[1:])
