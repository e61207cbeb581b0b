"""A conversation with softwire's job service from Python (docs/API.md walks through it).

Trains a linear classifier on two clusters of points the script makes with NumPy: it uploads
the data with the job, follows the job's events, fetches the trained variables and checks them
with NumPy.

    /usr/bin/python3 clients/python/example.py --to 127.0.0.1:7070 [--token-file FILE]
"""

import argparse
import io
import math
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import softwire_client  # noqa: E402

SOURCE_ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                            "..", ".."))

# A job file's text: softmax regression on 8 features, two classes.
JOB_TEXT = """
name: "two_clusters"
source {
  name: "points"
  output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: [8] }
  output { name: "y" dtype: DATA_TYPE_INT32 }
  npy { path: "data/x.npy" path: "data/y.npy" shuffle: true seed: 3 }
}
variable {
  name: "w" dtype: DATA_TYPE_FLOAT32 dims: [8, 2]
  initializer { normal { mean: 0 stddev: 0.1 seed: 1 } }
}
variable {
  name: "b" dtype: DATA_TYPE_FLOAT32 dims: [2]
  initializer { constant { value: 0 } }
}
op { name: "scores" type: "matmul" input: "x" input: "w" output: "scores" }
op { name: "logits" type: "bias_add" input: "scores" input: "b" output: "logits" }
op { name: "xent" type: "softmax_cross_entropy" input: "logits" input: "y" output: "xent" }
op { name: "loss" type: "reduce_mean" input: "xent" output: "loss" }
op { name: "accuracy" type: "accuracy" input: "logits" input: "y" output: "accuracy" }
metric: "accuracy"
train {
  loss: "loss"
  optimizer { sgd { learning_rate: 0.1 momentum: 0.9 } }
  steps: 60
  micro_batch_size: 32
}
"""


def make_points(count=512, seed=0):
    """Two Gaussian clusters in 8 dimensions, centred at -1 and +1: (x float32, y int32)."""
    random = np.random.default_rng(seed)
    y = random.integers(0, 2, size=count).astype(np.int32)
    x = random.normal(size=(count, 8)).astype(np.float32) * 0.7
    x += (2.0 * y[:, None] - 1.0).astype(np.float32)
    return x, y


def npy_bytes(array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def converse(client, log=print):
    """The whole conversation; returns what it saw so a test can check it."""
    devices = client.list_devices()
    for device in devices.device:
        log("device %s (%s, %d cores)" % (device.device, device.kind, device.cores))

    x, y = make_points()
    job, existing = client.submit(JOB_TEXT, file_name="two_clusters.pbtxt",
                                  data_files={"data/x.npy": npy_bytes(x),
                                              "data/y.npy": npy_bytes(y)},
                                  trace=True)
    log("submitted %s (%s)" % (job.job_id, "existing" if existing else "new"))

    events = []
    for event in client.watch(job.job_id):
        events.append(event)
        kind = event.WhichOneof("kind")
        if kind == "step" and event.step.step % 20 == 0:
            log("step %d loss %.4f accuracy %.3f" % (event.step.step, event.step.loss,
                                                      event.step.metric["accuracy"]))
        elif kind not in ("step",):
            log("event %d: %s" % (event.sequence, kind))

    results = client.fetch_results(job.job_id)
    w, b = results["variables"]["w"], results["variables"]["b"]
    predicted = np.argmax(x @ w + b, axis=1)
    accuracy = float(np.mean(predicted == y))
    log("fetched %d variables, %d steps of metrics, %d trace bytes; NumPy accuracy %.3f" %
        (len(results["variables"]), len(results["steps"]), len(results["trace"]), accuracy))
    return {"job": job, "events": events, "results": results, "accuracy": accuracy,
            "points": (x, y)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--to", default=os.environ.get("SOFTWIRE_SERVER", "127.0.0.1:7070"))
    parser.add_argument("--token-file")
    parser.add_argument("--protoc", default="protoc")
    parser.add_argument("--grpc-python-plugin", default="grpc_python_plugin")
    args = parser.parse_args()
    token = open(args.token_file).read().strip() if args.token_file else None
    with tempfile.TemporaryDirectory() as stubs_dir:
        stubs = softwire_client.generate_stubs(SOURCE_ROOT, stubs_dir, args.protoc,
                                               args.grpc_python_plugin)
        client = softwire_client.JobClient(args.to, stubs, token=token)
        seen = converse(client)
        client.close()
    return 0 if seen["accuracy"] > 0.9 and not math.isnan(seen["accuracy"]) else 1


if __name__ == "__main__":
    sys.exit(main())
