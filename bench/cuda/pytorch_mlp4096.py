#!/usr/bin/env python3
"""PyTorch peer for bench/cuda/mlp4096.pbtxt on a GPU (the GPU image's PyTorch).

Usage: bench/cuda/pytorch_mlp4096.py [--steps 50] [--repeats 5] [--warmup 10]

The same step as the softwire job: four 4096x4096 Linear + ReLU layers and a 4096x10 head,
batch 512, cross-entropy, SGD with momentum 0.9, float32, with TF32 off (the default, exact
products) and on. The batch is one fixed tensor on the GPU (the softwire job draws a new
synthetic batch on the host every step; that is its cost, not this peer's). Each mode:
`warmup` untimed steps, then `repeats` runs of `steps` steps timed with CUDA events; the figure
is the median run. Also the products alone: the eleven 512x4096x4096 products of a step
(four forward, four weight gradients, three input gradients) through torch.matmul, TF32 off
and on, the ceiling a step's products can reach. Prints one JSON object.
"""

import argparse
import json
import statistics

import torch

BATCH = 512
WIDTH = 4096
LAYERS = (WIDTH, WIDTH, WIDTH, WIDTH, WIDTH, 10)
PRODUCT_FLOPS = 2 * BATCH * WIDTH * WIDTH
STEP_FLOPS = 11 * PRODUCT_FLOPS  # the head's three small products left out


def timed(function, steps, repeats, warmup):
    for _ in range(warmup):
        function()
    torch.cuda.synchronize()
    seconds = []
    for _ in range(repeats):
        begin = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(steps):
            function()
        end.record()
        end.synchronize()
        seconds.append(begin.elapsed_time(end) / 1000 / steps)
    return statistics.median(seconds)


def training_step_seconds(steps, repeats, warmup):
    torch.manual_seed(0)
    layers = []
    for a, b in zip(LAYERS, LAYERS[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1]).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    loss_function = torch.nn.CrossEntropyLoss()
    x = torch.randn(BATCH, WIDTH, device="cuda")
    y = torch.randint(0, 10, (BATCH,), device="cuda")

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss_function(model(x), y).backward()
        optimizer.step()

    return timed(step, steps, repeats, warmup)


def products_seconds(steps, repeats, warmup):
    a = torch.randn(BATCH, WIDTH, device="cuda")
    w = torch.randn(WIDTH, WIDTH, device="cuda")
    out = torch.empty(BATCH, WIDTH, device="cuda")
    grad = torch.empty(WIDTH, WIDTH, device="cuda")

    def products():
        for _ in range(4):
            torch.matmul(a, w, out=out)              # forward
            torch.matmul(a.t(), a, out=grad)         # weight gradient X^T dY
        for _ in range(3):
            torch.matmul(a, w.t(), out=out)          # input gradient dY W^T

    return timed(products, steps, repeats, warmup)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=10)
    arguments = parser.parse_args()
    result = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
              "step_gflop": STEP_FLOPS / 1e9}
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        mode = "tf32" if tf32 else "float32"
        step = training_step_seconds(arguments.steps, arguments.repeats, arguments.warmup)
        products = products_seconds(arguments.steps, arguments.repeats, arguments.warmup)
        result[mode] = {"step_ms": step * 1e3, "samples_per_second": BATCH / step,
                        "products_ms": products * 1e3,
                        "products_tflops": STEP_FLOPS / products / 1e12}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
