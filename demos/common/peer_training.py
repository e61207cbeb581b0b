"""What the demos' PyTorch peers (charlm/torch_reference.py, fashion/reference.py) share around
their training loops, so their output reads like softwire's:

    log = StepLog(arguments.metrics_out, config["batch"], steps, arguments.print_every)
    for step in range(1, steps + 1):
        ...  # one training step
        log.step(step, loss.item(), accuracy)
    log.close()
    save_variables(arguments.save, parameters)

StepLog writes one JSON line per step in the layout of `softwire run --metrics-out`
(cli/step_output.h: steps from 0, loss, samples_per_second, seconds, then the metrics) and
prints a progress line on the first step, every print_every steps and the last.
save_variables writes each tensor as DIR/<name>.npy, as `softwire run --save` does.
"""

import json
import os
import time

import numpy as np


class StepLog:
    def __init__(self, metrics_path, batch, steps, print_every):
        self.metrics = open(metrics_path, "w") if metrics_path else None
        self.batch = batch
        self.steps = steps
        self.print_every = print_every
        self.started = time.perf_counter()
        self.previous = self.started

    def step(self, step, loss, accuracy):
        """Step `step` (from 1) ended with this loss and accuracy (floats)."""
        now = time.perf_counter()
        elapsed, step_seconds, self.previous = now - self.started, now - self.previous, now
        record = {"step": step - 1, "loss": loss,
                  "samples_per_second": self.batch / step_seconds,
                  "seconds": step_seconds, "accuracy": accuracy}
        if self.metrics:
            self.metrics.write(json.dumps(record) + "\n")
            self.metrics.flush()
        if step == 1 or step % self.print_every == 0 or step == self.steps:
            print(f"step {step:5d}  loss {loss:.4f}  accuracy {accuracy:.3f}  "
                  f"{elapsed / step * 1000:.1f} ms/step", flush=True)

    def close(self):
        if self.metrics:
            self.metrics.close()


def save_variables(folder, parameters):
    """Each torch tensor of `parameters` (name -> tensor) as folder/<name>.npy."""
    os.makedirs(folder, exist_ok=True)
    for name, value in parameters.items():
        np.save(os.path.join(folder, name + ".npy"), value.detach().numpy())
    print(f"saved {len(parameters)} variables to {folder}")
