"""The fashion demo's network in NumPy: the job's config, initial values, saved variables, and a
forward pass of network.py's ops.

    read_job_config(job_path)               the JSON make_job.py wrote on the first line
    initial_variables(config)               {name: array}, bit for bit softwire's initial values
    load_variables(directory, config)       {name: array} from `softwire run --save DIR`
    forward(variables, pixels, labels, config, training, dtype)
                                            {tensor name: value} of every op

With training=True batch_norm normalises with the batch's statistics (softwire's training
mode; step 0's loss is computed before any update), with training=False with the running
statistics (softwire's forward-only jobs, PyTorch's eval mode). Convolutions are im2col
products: float64 for checks, float32 for evaluating 10,000 images quickly.
"""

import json
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import network  # noqa: E402
import softwire_random  # noqa: E402

EPSILON = 1e-5  # batch_norm's default epsilon.


def read_job_config(job_path):
    with open(job_path) as job:
        header = re.match(r"# fashion: (\{.*\})\n", job.read())
    if not header:
        raise ValueError(f"{job_path}: first line must be '# fashion: {{...}}' as written by "
                         "make_job.py")
    return json.loads(header.group(1))


def initial_variables(config):
    variables, _ = network.network(config)
    return {v["name"]: softwire_random.initial_value(v["initializer"], tuple(v["dims"]))
            for v in variables}


def load_variables(directory, config):
    """Every variable of the network, running statistics included, as float32 arrays."""
    variables, _ = network.network(config)
    values = {}
    for v in variables:
        path = os.path.join(directory, v["name"] + ".npy")
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path}: missing (softwire run --save DIR writes one .npy "
                                    "per variable)")
        values[v["name"]] = np.load(path)
        if values[v["name"]].shape != tuple(v["dims"]):
            raise ValueError(f"{path}: shape {values[v['name']].shape}, expected {v['dims']}")
    return values


def conv2d(x, w, strides=(1, 1), padding=(0, 0)):
    """NCHW convolution as PyTorch's Conv2d without bias (groups 1, no dilation)."""
    n, c, h, width = x.shape
    o, _, kh, kw = w.shape
    (sh, sw), (ph, pw) = strides, padding
    padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh, ow = (h + 2 * ph - kh) // sh + 1, (width + 2 * pw - kw) // sw + 1
    windows = np.lib.stride_tricks.sliding_window_view(padded, (kh, kw), axis=(2, 3))
    windows = windows[:, :, ::sh, ::sw][:, :, :oh, :ow]  # [N, C, OH, OW, KH, KW]
    columns = windows.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * kh * kw)
    y = columns @ w.reshape(o, c * kh * kw).T.astype(x.dtype)
    return y.reshape(n, oh, ow, o).transpose(0, 3, 1, 2)


def batch_norm(x, gamma, beta, mean, var):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    scale = (gamma / np.sqrt(var + EPSILON)).astype(x.dtype)
    return (x - mean.astype(x.dtype).reshape(shape)) * scale.reshape(shape) + \
        beta.astype(x.dtype).reshape(shape)


def cross_entropy(logits, labels):
    top = logits.max(axis=1, keepdims=True)
    log_sum = np.log(np.exp(logits - top).sum(axis=1)) + top[:, 0]
    return log_sum - logits[np.arange(len(labels)), labels]


def forward(variables, pixels, labels, config, training=False, dtype=np.float64):
    """Every op's output for a batch; "loss", "logits", "accuracy" among them."""
    _, ops = network.network(config)
    values = {name: value.astype(dtype) for name, value in variables.items()}
    values["pixels"] = np.asarray(pixels, dtype=dtype)
    values["label"] = np.asarray(labels, dtype=np.int64)
    for op in ops:
        inputs = [values[name] for name in op["inputs"]]
        kind, attrs = op["type"], op["attrs"]
        if kind == "conv2d":
            y = conv2d(inputs[0], inputs[1], attrs.get("strides", (1, 1)),
                       attrs.get("padding", (0, 0)))
        elif kind == "batch_norm":
            x, gamma, beta, running_mean, running_var = inputs
            if training:
                axes = (0,) + tuple(range(2, x.ndim))
                mean, var = x.mean(axis=axes), x.var(axis=axes)
            else:
                mean, var = running_mean, running_var
            y = batch_norm(x, gamma, beta, mean, var)
        elif kind == "relu":
            y = np.maximum(inputs[0], 0)
        elif kind == "add":
            y = inputs[0] + inputs[1]
        elif kind == "global_avg_pool":
            y = inputs[0].mean(axis=(2, 3))
        elif kind == "matmul":
            y = inputs[0] @ inputs[1]
        elif kind == "bias_add":
            y = inputs[0] + inputs[1]
        elif kind == "softmax_cross_entropy":
            y = cross_entropy(inputs[0], inputs[1])
        elif kind == "reduce_mean":
            y = inputs[0].mean()
        elif kind == "accuracy":
            y = np.mean(inputs[0].argmax(axis=1) == inputs[1])
        else:
            raise ValueError(f"op {op['name']}: type {kind} has no NumPy version here")
        values[op["output"]] = y
    return values
