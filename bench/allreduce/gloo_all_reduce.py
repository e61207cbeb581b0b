#!/usr/bin/env python3
"""PyTorch's gloo all_reduce between 2 processes on 127.0.0.1: the baseline of all_reduce_bench.

Rank 0 (this process) reads one command per line on stdin: "run" times one all_reduce of a
float32 tensor of BYTES bytes on both ranks (after a barrier) and prints its seconds; "quit"
(or end of input) ends both ranks. Prints "ready" once both ranks are warm.

  gloo_all_reduce.py BYTES PORT
"""
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

RUN, QUIT = 1, 0


def serve(rank, elements, port, commands):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    tensor = torch.ones(elements, dtype=torch.float32)
    for _ in range(2):  # Warm: connections, buffers, page faults.
        dist.all_reduce(tensor)
    if rank == 0:
        print("ready", flush=True)
    command = torch.zeros(1, dtype=torch.int64)
    while True:
        if rank == 0:
            line = commands.readline().strip()
            command[0] = RUN if line == "run" else QUIT
        dist.broadcast(command, src=0)
        if int(command[0]) == QUIT:
            break
        tensor.fill_(1.0 + rank)
        dist.barrier()
        began = time.perf_counter()
        dist.all_reduce(tensor)
        seconds = time.perf_counter() - began
        if rank == 0:
            if float(tensor[0]) != 3.0 or float(tensor[-1]) != 3.0:
                sys.exit("gloo all_reduce gave a wrong sum")
            print(f"{seconds:.6f}", flush=True)
    dist.destroy_process_group()


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gloo_all_reduce.py BYTES PORT")
    elements = int(sys.argv[1]) // 4
    port = int(sys.argv[2])
    peer = mp.get_context("spawn").Process(target=serve, args=(1, elements, port, None))
    peer.start()
    try:
        serve(0, elements, port, sys.stdin)
    finally:
        peer.join(timeout=10)
        if peer.is_alive():
            peer.kill()


if __name__ == "__main__":
    main()
