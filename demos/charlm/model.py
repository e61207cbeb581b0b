"""The charlm model in NumPy: the forward pass of the job make_job.py writes.

Computes exactly what the job's ops compute (docs/OPS.md), in float64 for a clean reference:
    x = wte[ids] + wpe
    per block: x += attention(layer_norm(x)); x += mlp(layer_norm(x))
    logits = layer_norm(x) @ w_lm
Used by evaluate.py on the variables `softwire run --save DIR` writes (one DIR/<name>.npy per
variable), and by torch_reference.py as the shared description of names and shapes.
"""

import json
import math
import os
import re

import numpy as np

import softwire_random

EPSILON = 1e-5  # layer_norm's default epsilon.


def read_job_config(job_path):
    """The sizes make_job.py recorded in the job's first line, plus the text path it uses
    (resolved against the job's directory, like every path in a job)."""
    with open(job_path) as job:
        text = job.read()
    header = re.match(r"# charlm: (\{.*\})\n", text)
    if not header:
        raise ValueError(f"{job_path}: first line must be '# charlm: {{...}}' "
                         "as written by make_job.py")
    config = json.loads(header.group(1))
    path = re.search(r'text\s*\{[^}]*path:\s*"([^"]+)"', text)
    if not path:
        raise ValueError(f"{job_path}: no text dataset path")
    config["text_path"] = os.path.join(os.path.dirname(os.path.abspath(job_path)), path.group(1))
    return config


def variable_shapes(config):
    """Name -> shape of every variable, in the job's order."""
    c, t = config["embed"], config["context"]
    shapes = {"wte": (256, c), "wpe": (t, c)}
    for block in range(config["layers"]):
        p = f"block{block}_"
        shapes.update({
            p + "ln1_gamma": (c,), p + "ln1_beta": (c,),
            p + "wq": (c, c), p + "wk": (c, c), p + "wv": (c, c), p + "wo": (c, c),
            p + "ln2_gamma": (c,), p + "ln2_beta": (c,),
            p + "wfc": (c, 4 * c), p + "bfc": (4 * c,),
            p + "wproj": (4 * c, c), p + "bproj": (c,),
        })
    shapes.update({"lnf_gamma": (c,), "lnf_beta": (c,), "w_lm": (c, 256)})
    return shapes


def initial_variables(job_path, config):
    """The job's initial variables (float64 copies of the float32 values softwire creates),
    from the initializer of every `variable` line in make_job.py's format."""
    weights = {}
    text = open(job_path).read()
    pattern = re.compile(r'variable \{ name: "(\w+)".*?dims: \[([\d, ]+)\] initializer \{ '
                         r"(\w+) \{ ([^}]*) \} \} \}")
    for name, dims, kind, fields in pattern.findall(text):
        values = {key: float(value) for key, value in re.findall(r"(\w+): ([-\d.e]+)", fields)}
        if "seed" in values:
            values["seed"] = int(values["seed"])
        shape = tuple(int(d) for d in dims.split(","))
        weights[name] = softwire_random.initial_value({kind: values}, shape).astype(np.float64)
    missing = set(variable_shapes(config)) - set(weights)
    if missing:
        raise ValueError(f"{job_path}: no initializer found for {sorted(missing)}")
    return weights


def load_variables(directory, config):
    """Loads DIR/<name>.npy for every variable and checks its shape."""
    weights = {}
    for name, shape in variable_shapes(config).items():
        path = os.path.join(directory, name + ".npy")
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path}: missing (expected one .npy per variable, as "
                                    "`softwire run --save DIR` writes them)")
        value = np.load(path)
        if value.shape != shape:
            raise ValueError(f"{path}: shape {value.shape}, the job declares {shape}")
        weights[name] = value.astype(np.float64)
    return weights


def layer_norm(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + EPSILON) * gamma + beta


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def causal_softmax(scores):
    t = scores.shape[-1]
    masked = np.where(np.tril(np.ones((t, t), dtype=bool)), scores, -np.inf)
    masked = masked - masked.max(axis=-1, keepdims=True)
    exponentials = np.exp(masked)
    return exponentials / exponentials.sum(axis=-1, keepdims=True)


def attention(x, weights, prefix, heads):
    b, t, c = x.shape
    d = c // heads

    def split(name):  # [B, T, C] -> [B, H, T, d]
        return (x @ weights[prefix + name]).reshape(b, t, heads, d).transpose(0, 2, 1, 3)

    q, k, v = split("wq"), split("wk"), split("wv")
    probabilities = causal_softmax((q @ k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(d)))
    context = (probabilities @ v).transpose(0, 2, 1, 3).reshape(b, t, c)
    return context @ weights[prefix + "wo"]


def mlp(x, weights, prefix):
    hidden = gelu(x @ weights[prefix + "wfc"] + weights[prefix + "bfc"])
    return hidden @ weights[prefix + "wproj"] + weights[prefix + "bproj"]


def logits(ids, weights, config):
    """Logits [B, T', 256] for ids [B, T'] with T' <= context."""
    t = ids.shape[1]
    x = weights["wte"][ids] + weights["wpe"][:t]
    for block in range(config["layers"]):
        p = f"block{block}_"
        x = x + attention(layer_norm(x, weights[p + "ln1_gamma"], weights[p + "ln1_beta"]),
                          weights, p, config["heads"])
        x = x + mlp(layer_norm(x, weights[p + "ln2_gamma"], weights[p + "ln2_beta"]),
                    weights, p)
    return layer_norm(x, weights["lnf_gamma"], weights["lnf_beta"]) @ weights["w_lm"]


def cross_entropy(logits_value, targets):
    """Per-position loss: logsumexp(logits) - logits[target]."""
    top = logits_value.max(axis=-1, keepdims=True)
    log_sum = np.log(np.exp(logits_value - top).sum(axis=-1)) + top[..., 0]
    picked = np.take_along_axis(logits_value, targets[..., None], axis=-1)[..., 0]
    return log_sum - picked
