"""Reads the per-step metrics `softwire run --metrics-out FILE` writes.

The CLI writes JSON lines (cli/step_output.h), one object per step:
    {"step":0,"loss":2.30,"samples_per_second":1234.5,"seconds":0.01,"accuracy":0.12}
with steps counted from 0, "seconds" the step's wall time, the job's metrics after the fixed
keys, and null for numbers JSON cannot hold (NaN). Also accepted, so tools stay robust:
  - JSON lines: one object per step, e.g. {"step": 1, "loss": 5.54, "samples_per_second": ...}
  - one JSON array of such objects
  - one JSON object holding such an array under "steps" (other keys are kept as a summary)
Steps without a "step" key are numbered in file order from 0. Objects without "loss" (e.g. a
final summary line) are skipped by read_losses but returned by read_records.
"""

import json


def read_records(path):
    """(steps, summary): the per-step objects in order, and any top-level summary object."""
    with open(path) as stream:
        text = stream.read()
    stripped = text.strip()
    if not stripped:
        raise ValueError(f"{path}: empty metrics file")
    summary = {}
    try:
        document = json.loads(stripped)
    except json.JSONDecodeError:
        document = None
    if isinstance(document, list):
        records = document
    elif isinstance(document, dict) and isinstance(document.get("steps"), list):
        records = document["steps"]
        summary = {key: value for key, value in document.items() if key != "steps"}
    elif isinstance(document, dict):
        records = [document]
    else:
        records = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as error:
                    raise ValueError(f"{path}:{number}: not JSON: {error}") from None
    steps = [record for record in records if isinstance(record, dict)]
    return steps, summary


def read_losses(path):
    """[(step, loss)] for every record with a "loss", in file order (null reads as NaN)."""
    steps, _ = read_records(path)
    losses = []
    for index, record in enumerate(steps):
        if "loss" in record:
            loss = record["loss"]
            losses.append((int(record.get("step", index)),
                           float("nan") if loss is None else float(loss)))
    if not losses:
        raise ValueError(f"{path}: no step reports a 'loss'")
    return losses


def first_and_last(losses):
    """(loss at the first step, mean loss over the last steps, how many last steps): one
    micro-batch's loss is noisy, so the end of training is the mean of the last tenth of the
    steps (at least 1, at most 20)."""
    window = max(1, min(20, len(losses) // 10))
    return losses[0][1], sum(loss for _, loss in losses[-window:]) / window, window
