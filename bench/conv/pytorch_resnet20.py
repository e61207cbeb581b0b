#!/usr/bin/python3
"""The PyTorch peer of bench/conv/resnet20.pbtxt: ResNet-20 (make_resnet20.py's network), batch
64 of synthetic 3x32x32 inputs, SGD momentum 0.9; prints training samples/s as JSON for each
mode: float32 NCHW, float32 channels_last and, where the CPU has avx512_bf16, bf16 autocast in
both layouts. Each mode runs in a fresh process per thread setting `T:B`
(torch.set_num_threads(T), OPENBLAS_NUM_THREADS=B) and the fastest setting is reported.

Usage: pytorch_resnet20.py [--steps 20] [--warmup 3] [--settings 1:2,2:1,2:2]
                           [--modes float32,channels_last,bf16,bf16_channels_last]
"""

import argparse
import json
import os
import subprocess
import sys
import time


def model(torch):
    nn = torch.nn

    def conv_bn(cin, cout, kernel, stride):
        return [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False), nn.BatchNorm2d(cout)]

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.body = nn.Sequential(*conv_bn(cin, cout, 3, stride), nn.ReLU(),
                                      *conv_bn(cout, cout, 3, 1))
            self.shortcut = (nn.Sequential(*conv_bn(cin, cout, 1, stride))
                             if stride != 1 or cin != cout else nn.Identity())

        def forward(self, x):
            return torch.relu(self.body(x) + self.shortcut(x))

    layers = [*conv_bn(3, 16, 3, 1), nn.ReLU()]
    cin = 16
    for stage, width in enumerate([16, 32, 64]):
        for block in range(3):
            layers.append(Block(cin, width, 2 if stage > 0 and block == 0 else 1))
            cin = width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)]
    return nn.Sequential(*layers)


def measure(mode, torch_threads, steps, warmup, batch):
    import torch
    torch.set_num_threads(torch_threads)
    torch.manual_seed(0)
    net = model(torch)
    x = torch.randn(batch, 3, 32, 32)
    labels = torch.randint(0, 10, (batch,))
    if "channels_last" in mode:
        net = net.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)

    def step():
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=mode.startswith("bf16")):
            loss = torch.nn.functional.cross_entropy(net(x), labels)
        loss.backward()
        optimizer.step()

    for _ in range(warmup):
        step()
    begin = time.perf_counter()
    for _ in range(steps):
        step()
    return batch * steps / (time.perf_counter() - begin)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--settings", default="1:2,2:1")
    parser.add_argument("--modes", default="float32,channels_last")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    if arguments.child:
        mode, threads = arguments.child.split("@")
        print(measure(mode, int(threads), arguments.steps, arguments.warmup, arguments.batch))
        return 0
    results = {}
    for mode in arguments.modes.split(","):
        figures = {}
        for setting in arguments.settings.split(","):
            torch_threads, blas_threads = setting.split(":")
            environment = dict(os.environ, OPENBLAS_NUM_THREADS=blas_threads)
            output = subprocess.run(
                [sys.executable, __file__, "--child", f"{mode}@{torch_threads}", "--steps",
                 str(arguments.steps), "--warmup", str(arguments.warmup), "--batch",
                 str(arguments.batch)], env=environment, check=True, capture_output=True,
                text=True).stdout
            figures[setting] = float(output.strip().splitlines()[-1])
        fastest = max(figures, key=figures.get)
        results[mode] = {"samples_per_second": figures[fastest], "setting": fastest,
                         "all": figures}
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
