"""The fashion demo's network as data: its variables and its ops, in the job's terms.

make_job.py writes them into fashion.pbtxt, model.py runs them in NumPy (evaluate.py,
first_step_check.py) and reference.py in PyTorch, so the three cannot drift apart.

    network(config) -> (variables, ops)
      variables: [{"name", "dims", "initializer": {kind: {field: value}}, "frozen"}]
      ops:       [{"name", "type", "inputs", "output", "attrs": {name: value}}]

config (the JSON on the job's first line): "width" W, "blocks" [b1, b2, b3] (basic blocks per
stage), "strides" [s1, s2, s3] (the stride of each stage's first block; [1, 2, 2] when absent).
A ResNet for 28x28 grey images (He et al. 2016, the CIFAR variant of section 4.2); with
strides [2, 2, 2] (the demo's job):
    stem:    3x3 conv 1 -> W, batch_norm, relu                          [N, W, 28, 28]
    stage 1: b1 basic blocks of width W, the first with stride s1      [N, W, 14, 14]
    stage 2: b2 basic blocks of width 2W, the first with stride s2     [N, 2W, 7, 7]
    stage 3: b3 basic blocks of width 4W, the first with stride s3     [N, 4W, 4, 4]
    head:    global_avg_pool, linear 4W -> 10 (matmul + bias_add)      [N, 10]
    loss:    reduce_mean(softmax_cross_entropy(logits, label))
A basic block: 3x3 conv, batch_norm, relu, 3x3 conv, batch_norm, add the shortcut, relu; the
shortcut is the input, or a 1x1 conv + batch_norm where the block changes width or stride.
Convolutions have no bias (a batch_norm follows each). Every batch_norm keeps running
statistics (frozen variables, constant 0 and 1) for evaluation. He-normal initial values
(stddev sqrt(2 / fan_in)) for convolutions, sqrt(1 / fan_in) for the linear layer, each
variable with its own seed.
"""

import math

IMAGE = (1, 28, 28)  # Channels, height, width of one sample.
CLASSES = 10


class _Builder:
    def __init__(self):
        self.variables = []
        self.ops = []
        self.seed = 0

    def variable(self, name, dims, initializer, frozen=False):
        self.variables.append({"name": name, "dims": list(dims), "initializer": initializer,
                               "frozen": frozen})
        return name

    def op(self, name, op_type, inputs, attrs=None):
        self.ops.append({"name": name, "type": op_type, "inputs": list(inputs),
                         "output": name, "attrs": dict(attrs or {})})
        return name

    def normal(self, stddev):
        self.seed += 1
        return {"normal": {"mean": 0.0, "stddev": float(f"{stddev:.6g}"), "seed": self.seed}}

    def conv(self, name, x, cin, cout, kernel, stride):
        w = self.variable(name + ".w", [cout, cin, kernel, kernel],
                          self.normal(math.sqrt(2.0 / (kernel * kernel * cin))))
        attrs = {"padding": [kernel // 2, kernel // 2]}
        if stride != 1:
            attrs["strides"] = [stride, stride]
        return self.op(name, "conv2d", [x, w], attrs)

    def batch_norm(self, name, x, channels):
        gamma = self.variable(name + ".gamma", [channels], {"constant": {"value": 1.0}})
        beta = self.variable(name + ".beta", [channels], {"constant": {"value": 0.0}})
        mean = self.variable(name + ".running_mean", [channels], {"constant": {"value": 0.0}},
                             frozen=True)
        var = self.variable(name + ".running_var", [channels], {"constant": {"value": 1.0}},
                            frozen=True)
        return self.op(name, "batch_norm", [x, gamma, beta, mean, var])

    def conv_bn(self, name, x, cin, cout, kernel, stride):
        return self.batch_norm(name + ".bn", self.conv(name + ".conv", x, cin, cout, kernel,
                                                       stride), cout)

    def block(self, name, x, cin, cout, stride):
        h = self.op(name + ".relu1", "relu", [self.conv_bn(name + ".a", x, cin, cout, 3, stride)])
        h = self.conv_bn(name + ".b", h, cout, cout, 3, 1)
        shortcut = x
        if stride != 1 or cin != cout:
            shortcut = self.conv_bn(name + ".shortcut", x, cin, cout, 1, stride)
        return self.op(name + ".relu2", "relu", [self.op(name + ".add", "add", [h, shortcut])])


def network(config):
    """(variables, ops) of the network config describes; inputs "pixels" and "label"."""
    width, blocks = config["width"], config["blocks"]
    strides = config.get("strides", [1, 2, 2])
    if width < 1 or len(blocks) != 3 or min(blocks) < 1:
        raise ValueError(f"width {width}, blocks {blocks}: need width >= 1 and three stages "
                         "of at least one block")
    net = _Builder()
    x = net.op("stem.relu", "relu", [net.conv_bn("stem", "pixels", IMAGE[0], width, 3, 1)])
    cin = width
    for stage, count in enumerate(blocks):
        cout = width << stage
        for index in range(count):
            stride = strides[stage] if index == 0 else 1
            x = net.block(f"stage{stage + 1}.block{index + 1}", x, cin, cout, stride)
            cin = cout
    features = net.op("pool", "global_avg_pool", [x])
    w = net.variable("fc.w", [cin, CLASSES], net.normal(math.sqrt(1.0 / cin)))
    b = net.variable("fc.b", [CLASSES], {"constant": {"value": 0.0}})
    logits = net.op("logits", "bias_add", [net.op("fc", "matmul", [features, w]), b])
    losses = net.op("cross_entropy", "softmax_cross_entropy", [logits, "label"])
    net.op("loss", "reduce_mean", [losses])
    net.op("accuracy", "accuracy", [logits, "label"])
    return net.variables, net.ops


def parameter_count(variables):
    """Trainable elements (frozen running statistics excluded)."""
    return sum(math.prod(v["dims"]) for v in variables if not v["frozen"])
