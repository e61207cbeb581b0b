#!/usr/bin/python3
"""Evaluates a trained charlm: validation loss on the held-out text, and a text sample.

Usage: demos/charlm/evaluate.py --variables DIR [--job demos/charlm/charlm.pbtxt]
                                [--metrics FILE] [--sample-length 300] [--temperature 0.5]
                                [--json FILE]

  --variables DIR  the .npy files `softwire run JOB --save DIR` wrote (DIR/<variable>.npy)
  --metrics FILE   the per-step metrics `softwire run --metrics-out FILE` wrote; when given,
                   the summary includes the training loss at the first and the last step
  --random-init    evaluate the job's initial variables instead (no training), computed
                   with the NumPy port of base/random.h

The validation loss is the mean next-byte cross-entropy (nats) over every position of
non-overlapping `context`-byte windows of the held-out tail (the bytes after
train_fraction of the file), computed with a NumPy forward pass of the job's model (model.py).
A model that learned nothing scores ln 256 = 5.55.
"""

import argparse
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import model  # noqa: E402
import softwire_metrics  # noqa: E402

UNIFORM_LOSS = math.log(256)


def held_out_windows(config):
    """Non-overlapping windows (ids, targets) of the bytes after train_fraction."""
    data = np.frombuffer(open(config["text_path"], "rb").read(), dtype=np.uint8)
    fraction = config["train_fraction"]
    split = int(math.floor(len(data) * fraction)) if fraction > 0 else len(data)
    tail = data[split:].astype(np.int64)
    t = config["context"]
    count = (len(tail) - 1) // t
    if count == 0:
        raise ValueError(f"{config['text_path']}: held-out tail of {len(tail)} bytes is shorter "
                         f"than one window of {t}")
    ids = np.stack([tail[i * t:(i + 1) * t] for i in range(count)])
    targets = np.stack([tail[i * t + 1:(i + 1) * t + 1] for i in range(count)])
    return ids, targets


def validation_loss(weights, config, batch=64):
    ids, targets = held_out_windows(config)
    total, positions = 0.0, 0
    for start in range(0, len(ids), batch):
        losses = model.cross_entropy(model.logits(ids[start:start + batch], weights, config),
                                     targets[start:start + batch])
        total += losses.sum()
        positions += losses.size
    return total / positions, positions


def sample_text(weights, config, prompt, length, temperature, seed=0):
    """Appends `length` bytes, each drawn given the last `context` bytes: the most likely byte
    when temperature is 0 (greedy), else from softmax(logits / temperature) with a seeded
    generator, so the sample is the same on every run."""
    rng = np.random.default_rng(seed)
    tokens = list(prompt.encode())
    for _ in range(length):
        window = np.array([tokens[-config["context"]:]], dtype=np.int64)
        logits = model.logits(window, weights, config)[0, -1]
        if temperature <= 0:
            tokens.append(int(logits.argmax()))
            continue
        scaled = (logits - logits.max()) / temperature
        probabilities = np.exp(scaled) / np.exp(scaled).sum()
        tokens.append(int(rng.choice(256, p=probabilities)))
    # Show bytes outside printable ASCII (likely only from an untrained model) as dots.
    return "".join(chr(b) if 32 <= b < 127 or b in (9, 10) else "." for b in tokens)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--job", default=os.path.join(HERE, "charlm.pbtxt"))
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--variables", help="directory of saved .npy variables")
    source.add_argument("--random-init", action="store_true")
    parser.add_argument("--metrics", help="metrics file of `softwire run --metrics-out`")
    parser.add_argument("--prompt", default="This License ")
    parser.add_argument("--sample-length", type=int, default=300)
    parser.add_argument("--temperature", type=float, default=0.5,
                        help="sampling temperature; 0 picks the most likely byte (greedy)")
    parser.add_argument("--json", help="also write the results to this JSON file")
    arguments = parser.parse_args(argv)

    config = model.read_job_config(arguments.job)
    if arguments.random_init:
        weights = model.initial_variables(arguments.job, config)
    else:
        weights = model.load_variables(arguments.variables, config)
    loss, positions = validation_loss(weights, config)
    result = {"validation_loss": loss, "validation_positions": positions,
              "uniform_loss": UNIFORM_LOSS}
    lines = []
    validation = f"validation loss {loss:.2f} (uniform guess {UNIFORM_LOSS:.2f})"
    if arguments.metrics:
        steps = softwire_metrics.read_losses(arguments.metrics)
        first, last, window = softwire_metrics.first_and_last(steps)
        result.update(first_step_loss=first, last_steps_loss=last, steps=len(steps))
        lines.append(f"training loss {first:.2f} -> {last:.2f} over {len(steps)} steps; "
                     + validation)
        lines.append(f"  training loss: step 1, then the mean of the last {window} steps")
    else:
        lines.append(validation)
    lines.append(f"  validation loss: nats per byte over {positions} held-out bytes (the text "
                 f"after the first {config['train_fraction']:.0%} of the corpus)")
    if arguments.sample_length > 0:
        sample = sample_text(weights, config, arguments.prompt, arguments.sample_length,
                             arguments.temperature)
        result["sample"] = sample
        how = ("greedy" if arguments.temperature <= 0
               else f"temperature {arguments.temperature:g}, seed 0")
        lines.append(f"sample ({how}) from the prompt {arguments.prompt!r}:")
        lines += ["  | " + line for line in sample.split("\n")]
    print("\n".join(lines))
    if arguments.json:
        with open(arguments.json, "w") as output:
            json.dump(result, output, indent=2)


if __name__ == "__main__":
    main(sys.argv[1:])
