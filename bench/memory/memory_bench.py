#!/usr/bin/python3
"""Memory of a training step: softwire's plan and run against PyTorch 1.13's live tensors.

Usage: bench/memory/memory_bench.py [--softwire build/cli/softwire] [--jobs mlp,charlm]
                                    [--run-steps 20] [--json FILE]
       bench/memory/memory_bench.py --pytorch mlp|charlm [--job FILE]   (one PyTorch side, JSON)

Two jobs, the issue's table (issue 14): the MLP bench job (bench/training/mlp.pbtxt,
784-1024-1024-10, batch 256, SGD momentum 0.9) and the flagship transformer
(demos/charlm/charlm.pbtxt, batch 32, Adam), float32, one CPU device.

PyTorch's side, in a process of its own (Debian's python3-torch, 1.13), the peer each of
bench/training/pytorch_mlp.py and demos/charlm/torch_reference.py trains, with the step they use:
  - parameters, gradients and optimizer state: the bytes of their tensors' storages;
  - the live tensor peak over a steady-state step: on a CPU there is no CUDA allocator to ask,
    so the script asks the allocator's profiler hooks (torch.profiler with profile_memory=True:
    c10's CPU allocator reports every tensor allocation and free with its bytes). After three
    warm-up steps the profiler records two more; the second is the measured one. Live bytes at
    its start are every storage reachable then (parameters, their .grad, the optimizer's state,
    the batch, the last loss: found through the garbage collector's tensors, each storage
    counted once); the peak is that plus the highest running sum of the step's allocations and
    frees (in the order the profiler recorded them). Every free in the measured step is of a
    block allocated while the profiler ran, so no size is unknown. The sum at the step's end
    must return to where it began (a steady state); the script checks it. What this counts:
    every tensor the step allocates, the temporaries inside autograd and the optimizer
    included; not the allocator's own bookkeeping, not Python objects, not the libraries' code.
  - the activations backward reads: the storages saved for backward at the end of the forward
    pass (torch.autograd.graph.saved_tensors_hooks), parameters left out, each counted once.
  - gradients freed each step: the MLP peer zeroes with set_to_none=True (bench/training), the
    charlm peer with optimizer.zero_grad() (1.13's default, set_to_none=False) as
    torch_reference.py does; both are measured as their peers run them, and the other variant is
    printed beside them.

softwire's side: `softwire compile JOB --json` (planned bytes per device and their split,
compiler/plan_summary.cc) and the peak resident set size of `softwire run JOB --steps N --quiet`,
the child's ru_maxrss from wait4 (the kernel's high-water mark of the whole process: binary,
threads, CAF, OpenBLAS and the arena).

The lower bound: weights and optimizer state live across steps; at the turn from forward to
backward every saved activation is live with them, and when the last gradient is made every
gradient is (both sides update after the whole backward), so any step of this model holds
  lower bound = parameters + optimizer state + max(saved activations, gradients)
at some moment (PyTorch's figures for each term).

softwire's own floor for its plan: under the protocol's rule for sharing (two registers share
bytes only when every legal firing order keeps them apart), the registers live at one moment of
any one legal order can never share, so the largest such sum is a lower bound on the plan's
register bytes. The script replays two legal orders of one step from `softwire compile --dump`:
the plan's actor order, and the same with every weight-gradient product moved as late as the
plan lets it run: last where nothing but its update reads it, else just before the first actor
that waits for it through an ordering input (order_weight_gradients, docs/PROTOCOL.md).
It also compiles each job without ordering edges (--no-ordering-edges) and with every recompute
candidate (--recompute -1), with and without them, and prints their planned bytes.
"""

import argparse
import gc
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PYTHON = "/usr/bin/python3"
MIB = 1024 * 1024

# cli/testing's tiny job (one 4x3 matmul): its arena is a few KiB, so its peak RSS is the
# process's fixed overhead.
TINY_JOB = """name: "tiny"
source {
  name: "data"
  output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: 4 }
  output { name: "labels" dtype: DATA_TYPE_INT32 }
  synthetic { seed: 7 int_high: 3 }
}
variable { name: "w" dtype: DATA_TYPE_FLOAT32 dims: [4, 3]
           initializer { normal { stddev: 0.1 seed: 1 } } }
op { name: "fc" type: "matmul" input: ["x", "w"] output: "logits" }
op { name: "xent" type: "softmax_cross_entropy" input: ["logits", "labels"] output: "losses" }
op { name: "mean" type: "reduce_mean" input: "losses" output: "loss" }
train { loss: "loss" optimizer { sgd { learning_rate: 0.1 } } steps: 4 micro_batch_size: 8
        micro_batches_per_step: 2 }
"""

JOBS = {
    "mlp": os.path.join(ROOT, "bench", "training", "mlp.pbtxt"),
    "charlm": os.path.join(ROOT, "demos", "charlm", "charlm.pbtxt"),
}


# ---------------------------------------------------------------------------------------------
# PyTorch's side (runs in its own process: --pytorch JOB).

def mlp_peer(torch, set_to_none):
    """bench/training/pytorch_mlp.py's model, batch, optimizer and step."""
    sys.path.insert(0, os.path.join(ROOT, "bench", "training"))
    import pytorch_mlp
    layers = []
    for a, b in zip(pytorch_mlp.LAYERS, pytorch_mlp.LAYERS[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_function = torch.nn.CrossEntropyLoss()
    x = torch.randn(pytorch_mlp.BATCH, pytorch_mlp.LAYERS[0])
    y = torch.randint(0, pytorch_mlp.LAYERS[-1], (pytorch_mlp.BATCH,))
    parameters = list(model.parameters())

    def forward():
        return loss_function(model(x), y)

    def step():
        optimizer.zero_grad(set_to_none=set_to_none)
        loss = forward()
        loss.backward()
        optimizer.step()
        return loss

    return parameters, optimizer, forward, step


def charlm_peer(torch, set_to_none, job):
    """demos/charlm/torch_reference.py's model, Adam and step, on batches of random byte ids
    (the values do not change what is allocated)."""
    sys.path.insert(0, os.path.join(ROOT, "demos", "charlm"))
    sys.path.insert(0, os.path.join(ROOT, "demos", "common"))
    import model
    import torch_reference
    config = model.read_job_config(job)
    parameters = {name: torch.zeros(shape, dtype=torch.float32).normal_(0, 0.02)
                  .requires_grad_(True) for name, shape in model.variable_shapes(config).items()}
    optimizer = torch.optim.Adam(parameters.values(), lr=config["learning_rate"],
                                 betas=(0.9, 0.99), eps=1e-8)
    forward_logits = torch_reference.build_forward(torch, config)
    generator = torch.Generator().manual_seed(1)
    shape = (config["batch"], config["context"])
    ids = torch.randint(0, 256, shape, generator=generator)
    targets = torch.randint(0, 256, shape, generator=generator)

    def forward():
        logits = forward_logits(parameters, ids)
        return torch.nn.functional.cross_entropy(logits.reshape(-1, 256), targets.reshape(-1))

    def step():  # torch_reference.py's order: forward, zero_grad, backward, step.
        loss = forward()
        optimizer.zero_grad(set_to_none=set_to_none)
        loss.backward()
        optimizer.step()
        return loss

    return list(parameters.values()), optimizer, forward, step


def storage_key(tensor):
    storage = tensor.storage()
    return storage.data_ptr(), storage.nbytes()


def unique_bytes(tensors):
    seen = {}
    for tensor in tensors:
        if tensor is None or tensor.device.type != "cpu":
            continue
        pointer, size = storage_key(tensor)
        if pointer:
            seen[pointer] = max(seen.get(pointer, 0), size)
    return sum(seen.values())


def live_tensors(torch, parameters):
    """Every tensor reachable now: the collector's tensor objects and the parameters' grads."""
    found = [obj for obj in gc.get_objects() if isinstance(obj, torch.Tensor)]
    found += [p.grad for p in parameters if p.grad is not None]
    return found


def optimizer_state_bytes(optimizer):
    tensors = []
    for state in optimizer.state.values():
        tensors += [value for value in state.values() if hasattr(value, "storage")]
    return unique_bytes(tensors)


def saved_activation_bytes(torch, parameters, forward):
    """Storages saved for backward by one forward pass, parameters excepted, each once."""
    parameter_pointers = {storage_key(p)[0] for p in parameters}
    saved = {}

    def pack(tensor):
        pointer, size = storage_key(tensor)
        if pointer and pointer not in parameter_pointers:
            saved[pointer] = max(saved.get(pointer, 0), size)
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        loss = forward()
    del loss
    return sum(saved.values())


def live_peak(torch, parameters, step):
    """Live tensor bytes at the start of a steady-state step, their peak over it and at its
    end, from the CPU allocator's profiler events (see the module comment)."""
    from torch.profiler import ProfilerActivity, profile, record_function
    for _ in range(3):
        step()
    gc.collect()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as profiler:
        step()
        gc.collect()
        start = unique_bytes(live_tensors(torch, parameters))
        with record_function("measured_step"):
            loss = step()
        del loss
        gc.collect()
        end = unique_bytes(live_tensors(torch, parameters))
    events = profiler.profiler.kineto_results.events()
    marker = [e for e in events if e.name() == "measured_step"]
    if len(marker) != 1:
        raise RuntimeError(f"expected one measured_step range, found {len(marker)}")
    begin_us = marker[0].start_us()
    end_us = begin_us + marker[0].duration_us()
    running = peak = 0
    for event in events:
        if event.name() != "[memory]" or event.device_type() != torch._C._autograd.DeviceType.CPU:
            continue
        if begin_us <= event.start_us() <= end_us:
            running += event.nbytes()
            peak = max(peak, running)
    return {"start_bytes": start, "peak_bytes": start + peak, "end_bytes": end,
            "net_step_bytes": running}


def measure_pytorch(name, job, set_to_none):
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(0)
    if name == "mlp":
        parameters, optimizer, forward, step = mlp_peer(torch, set_to_none)
    else:
        parameters, optimizer, forward, step = charlm_peer(torch, set_to_none, job)
    result = live_peak(torch, parameters, step)
    result.update({
        "torch": torch.__version__,
        "set_to_none": set_to_none,
        "parameter_count": sum(p.numel() for p in parameters),
        "parameter_bytes": unique_bytes(parameters),
        "gradient_bytes": unique_bytes([p.grad if p.grad is not None else torch.empty_like(p)
                                        for p in parameters]),
        "optimizer_state_bytes": optimizer_state_bytes(optimizer),
        "saved_activation_bytes": saved_activation_bytes(torch, parameters, forward),
    })
    # Steady state: the step ends where it began, give or take the step's scalars.
    if abs(result["net_step_bytes"]) > 64 * 1024:
        raise RuntimeError(f"{name}: the measured step's allocations do not balance "
                           f"({result['net_step_bytes']} bytes): not a steady state")
    return result


def pytorch_side(name, job, set_to_none):
    """Runs measure_pytorch in a fresh process, one torch thread and one OpenBLAS thread."""
    environment = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    command = [PYTHON, os.path.abspath(__file__), "--pytorch", name, "--job", job]
    if not set_to_none:
        command.append("--keep-grads")
    output = subprocess.run(command, check=True, capture_output=True, text=True,
                            env=environment).stdout
    return json.loads(output)


# ---------------------------------------------------------------------------------------------
# softwire's side.

def softwire_planned(softwire, job, flags=()):
    output = subprocess.run([softwire, "compile", job, "--json", *flags], check=True,
                            capture_output=True, text=True).stdout
    return json.loads(output)


DUMP_ACTOR = re.compile(r"actor (\d+) '([^']+)' (\w+)")
DUMP_ORDERING_INPUT = re.compile(r"\s+in register (\d+) '[^']+' from '[^']+' phase \d+ ordering only")
DUMP_REGISTER = re.compile(r"\s+out register (\d+) '([^']+)' .+? device (\d+) slots (\d+) x (\d+) B "
                           r"at (\d+) period \d+ consumers \[(.*)\]")


def read_dump(text):
    """Actors (id -> (name, kind)), registers (id -> dict) and ordering inputs (actor id -> the
    register ids it waits for without reading them) of `softwire compile --dump`."""
    actors, registers, ordering, current = {}, {}, {}, None
    for line in text.splitlines():
        match = DUMP_ACTOR.match(line)
        if match:
            current = int(match.group(1))
            actors[current] = (match.group(2), match.group(3))
            continue
        match = DUMP_ORDERING_INPUT.match(line)
        if match:
            ordering.setdefault(current, []).append(int(match.group(1)))
            continue
        match = DUMP_REGISTER.match(line)
        if match:
            registers[int(match.group(1))] = {
                "name": match.group(2), "device": int(match.group(3)),
                "bytes": int(match.group(4)) * int(match.group(5)), "offset": int(match.group(6)),
                "producer": current,
                "consumers": [int(c) for c in re.findall(r"(\d+) '", match.group(7))]}
    return actors, registers, ordering


def order_live_peak(actors, registers, order, device=0):
    """Register bytes live at once, at the worst moment, when one step fires its actors one at a
    time in `order` (a legal order of a one-piece step): a register is live from its producer's
    firing to its last reader's (a variable's for the whole step; an in-place output from the
    firing after its input's last). Any layout the plan checker accepts keeps every register
    live together in some legal order apart, so the largest such sum is a lower bound on the
    device's register bytes."""
    position = {actor: i for i, actor in enumerate(order)}
    inputs = {actor: [] for actor in actors}
    for rid, reg in registers.items():
        for consumer in reg["consumers"]:
            inputs[consumer].append(rid)
    live = [0] * len(order)
    for rid, reg in registers.items():
        if reg["device"] != device:
            continue
        if actors[reg["producer"]][1] == "variable":
            begin, end = 0, len(order) - 1
        else:
            begin = position[reg["producer"]]
            end = max([position[c] for c in reg["consumers"]] + [begin])
            if any(registers[i]["offset"] == reg["offset"] and registers[i]["bytes"] == reg["bytes"]
                   for i in inputs[reg["producer"]] if registers[i]["device"] == device):
                begin += 1  # Written in place over an input that dies here.
        for t in range(begin, end + 1):
            live[t] += reg["bytes"]
    worst = max(range(len(order)), key=lambda t: live[t])
    return live[worst], actors[order[worst]][0]


def softwire_order_bounds(softwire, job, flags=()):
    """order_live_peak for legal orders of one step: the plan's actor order (forward, backward,
    updates), and the same with every weight-gradient product moved as late as the plan lets it
    run: after the rest of backward where nothing waits for it (only its update reads it), else
    just before the first actor that waits for it (an ordering input, `ordering only` in the
    dump: docs/PROTOCOL.md), in plan order or reversed (the larger of the two)."""
    text = subprocess.run([softwire, "compile", job, "--dump", *flags], check=True,
                          capture_output=True, text=True).stdout
    actors, registers, ordering = read_dump(text)
    updates = {a for a, (_, kind) in actors.items() if kind == "update"}
    weight_gradients = {reg["producer"] for reg in registers.values()
                        if actors[reg["producer"]][1] == "compute" and
                        any(c in updates for c in reg["consumers"])}
    waiters = {}  # Weight-gradient product -> the actors that wait for it.
    for actor, waited in ordering.items():
        for rid in waited:
            waiters.setdefault(registers[rid]["producer"], set()).add(actor)
    plan_order = [a for a in sorted(actors) if a not in updates] + sorted(updates)

    def moved_late(products):
        order = [a for a in plan_order if a not in updates and a not in weight_gradients]

        def place(product):  # After the products that wait for it are placed (a product may).
            if product in order:
                return
            for waiter in sorted(waiters.get(product, ())):
                if waiter in weight_gradients:
                    place(waiter)
            if product in waiters:
                order.insert(min(order.index(w) for w in waiters[product]), product)
            else:
                order.append(product)

        for product in products:
            place(product)
        return order + sorted(updates)

    # In plan order and in reverse, so the products that read the earliest layers' activations
    # run last.
    plan_bytes, plan_at = order_live_peak(actors, registers, plan_order)
    late_bytes, late_at = max(order_live_peak(actors, registers, moved_late(sorted(weight_gradients))),
                              order_live_peak(actors, registers,
                                              moved_late(sorted(weight_gradients, reverse=True))))
    return {"plan_order_bytes": plan_bytes, "plan_order_at": plan_at,
            "weight_gradients_last_bytes": late_bytes, "weight_gradients_last_at": late_at,
            "ordering_edges": sum(len(w) for w in ordering.values())}


def anonymous_resident_bytes(pid):
    """RssAnon of /proc/PID/status (the process's own memory: heap, stacks, the arena; not the
    file pages of its code), bytes; 0 once it has exited."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def softwire_peak_rss(softwire, job, steps):
    """`softwire run JOB --steps N --quiet`: (ru_maxrss, the largest RssAnon of samples every
    millisecond), bytes. The kernel keeps no high-water mark of anonymous memory alone; the
    arena is held from the first step to the last, so the samples see it."""
    process = subprocess.Popen([softwire, "run", job, "--steps", str(steps), "--quiet"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    anonymous = 0
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid != 0:
            break
        anonymous = max(anonymous, anonymous_resident_bytes(process.pid))
        time.sleep(0.001)
    process.returncode = os.waitstatus_to_exitcode(status)
    stderr = process.stderr.read().decode(errors="replace")
    if process.returncode != 0:
        raise RuntimeError(f"softwire run {job} failed ({process.returncode}): {stderr}")
    return usage.ru_maxrss * 1024, anonymous


def smaps_breakdown(pid):
    """Resident bytes of a live process by mapping: the binary's own file, shared libraries,
    anonymous mappings of at least 1 MiB (the arena, OpenBLAS's buffers, big malloc blocks),
    smaller anonymous mappings (thread stacks, malloc arenas), the heap and the rest."""
    parts = {"binary": 0, "libraries": 0, "anonymous >= 1 MiB": 0, "anonymous < 1 MiB": 0,
             "heap": 0, "other": 0}
    largest = []
    name, size = "", 0
    with open(f"/proc/{pid}/smaps") as smaps:
        for line in smaps:
            fields = line.split()
            if "-" in fields[0] and len(fields) >= 5 and not fields[0].endswith(":"):
                begin, end = (int(x, 16) for x in fields[0].split("-"))
                name, size = (fields[5] if len(fields) > 5 else ""), end - begin
            elif fields[0] == "Rss:":
                rss = int(fields[1]) * 1024
                if name.endswith("/softwire"):
                    parts["binary"] += rss
                elif ".so" in name:
                    parts["libraries"] += rss
                elif name == "[heap]":
                    parts["heap"] += rss
                elif name == "":
                    key = "anonymous >= 1 MiB" if size >= MIB else "anonymous < 1 MiB"
                    parts[key] += rss
                    if size >= MIB:
                        largest.append(rss)
                else:
                    parts["other"] += rss
    parts["largest anonymous mappings"] = sorted(largest, reverse=True)[:6]
    return parts


def softwire_rss_breakdown(softwire, job, steps):
    """Runs `softwire run` and samples /proc/PID/smaps every 50 ms; the sample with the most
    resident bytes, by part (smaps_breakdown)."""
    process = subprocess.Popen([softwire, "run", job, "--steps", str(steps), "--quiet"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    best, best_total = None, -1
    while process.poll() is None:
        try:
            parts = smaps_breakdown(process.pid)
        except (OSError, ValueError, IndexError):
            break
        total = sum(v for k, v in parts.items() if isinstance(v, int))
        if total > best_total:
            best, best_total = parts, total
        time.sleep(0.05)
    process.wait()
    return best


# ---------------------------------------------------------------------------------------------

def mib(value):
    return f"{value / MIB:.1f}"


PEERS = {"mlp": True, "charlm": False}  # set_to_none as each peer zeroes its gradients.


def measure(arguments, name, job):
    peer = pytorch_side(name, job, PEERS[name])
    other = pytorch_side(name, job, not PEERS[name])
    plan = softwire_planned(arguments.softwire, job)
    device = plan["devices"][0]
    rss, anonymous = softwire_peak_rss(arguments.softwire, job, arguments.run_steps)
    bounds = softwire_order_bounds(arguments.softwire, job)
    # The same plan without ordering edges, and with every recompute candidate (docs/PROTOCOL.md,
    # "Ordering inputs"; docs/PARALLELISM.md, "A memory budget the compiler meets").
    variants = {label: softwire_planned(arguments.softwire, job, flags)["devices"][0]
                for label, flags in (("no ordering edges", ("--no-ordering-edges",)),
                                     ("recompute -1", ("--recompute", "-1")),
                                     ("no ordering edges, recompute -1",
                                      ("--no-ordering-edges", "--recompute", "-1")))}
    breakdown = softwire_rss_breakdown(arguments.softwire, job, arguments.run_steps * 5)
    bound = (peer["parameter_bytes"] + peer["optimizer_state_bytes"] +
             max(peer["saved_activation_bytes"], peer["gradient_bytes"]))
    return {"job": name, "pytorch": peer, "pytorch_other_zeroing": other,
            "lower_bound_bytes": bound, "planned": device, "peak_rss_bytes": rss,
            "peak_anonymous_bytes": anonymous, "order_bounds": bounds, "variants": variants, "rss_breakdown": breakdown,
            "run_steps": arguments.run_steps}


def print_table(results):
    print("| job | PyTorch live peak | other zeroing | lower bound (params + optimizer + max(saved"
          ", grads)) | softwire planned | planned / PyTorch | peak RSS | RSS - planned |"
          " peak anonymous | anonymous - planned |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        p = r["pytorch"]
        planned = r["planned"]["planned_bytes"]
        print(f"| {r['job']} | {mib(p['peak_bytes'])} MiB (set_to_none={p['set_to_none']}) | "
              f"{mib(r['pytorch_other_zeroing']['peak_bytes'])} MiB | "
              f"{mib(r['lower_bound_bytes'])} MiB = {mib(p['parameter_bytes'])} + "
              f"{mib(p['optimizer_state_bytes'])} + max({mib(p['saved_activation_bytes'])}, "
              f"{mib(p['gradient_bytes'])}) | {mib(planned)} MiB ({planned:,} B) | "
              f"{planned / p['peak_bytes']:.2f}x | {mib(r['peak_rss_bytes'])} MiB | "
              f"{mib(r['peak_rss_bytes'] - planned)} MiB | {mib(r['peak_anonymous_bytes'])} MiB |"
              f" {mib(r['peak_anonymous_bytes'] - planned)} MiB |")
    print()
    for r in results:
        p = r["pytorch"]
        print(f"{r['job']}: PyTorch {p['torch']}, {p['parameter_count']:,} parameters; live at the"
              f" measured step's start {mib(p['start_bytes'])} MiB, peak {mib(p['peak_bytes'])}"
              f" MiB, end {mib(p['end_bytes'])} MiB")
        b = r["order_bounds"]
        fixed = r["planned"]["planned_bytes"] - r["planned"]["register_bytes"]
        print(f"{r['job']}: softwire registers {mib(r['planned']['register_bytes'])} MiB; live at"
              f" once in the plan's order {mib(b['plan_order_bytes'])} MiB (at"
              f" {b['plan_order_at']}), weight-gradient products last"
              f" {mib(b['weight_gradients_last_bytes'])} MiB (at {b['weight_gradients_last_at']});"
              f" no layout below {mib(b['weight_gradients_last_bytes'] + fixed)} MiB planned"
              f" (+ {mib(fixed)} MiB state and workspaces)")
        print(f"{r['job']}: planned {mib(r['planned']['planned_bytes'])} MiB with"
              f" {b['ordering_edges']} ordering edges; " +
              "; ".join(f"{label} {mib(v['planned_bytes'])} MiB"
                        f" ({v['planned_bytes'] / p['peak_bytes']:.2f}x)"
                        for label, v in r["variants"].items()))
        parts = r["rss_breakdown"] or {}
        print(f"{r['job']}: resident at the fullest smaps sample: " +
              ", ".join(f"{k} {mib(v)}" for k, v in parts.items() if isinstance(v, int)) +
              " (MiB); largest anonymous mappings " +
              ", ".join(mib(v) for v in parts.get("largest anonymous mappings", [])))
        split = r["planned"].get("split", {})
        if split:
            print(f"{r['job']}: softwire planned split: " +
                  ", ".join(f"{key} {mib(value)}" for key, value in split.items()) + " (MiB)")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--softwire", default=os.path.join(ROOT, "build", "cli", "softwire"))
    parser.add_argument("--jobs", default="mlp,charlm")
    parser.add_argument("--run-steps", type=int, default=20,
                        help="steps of the softwire run whose peak RSS is taken")
    parser.add_argument("--json", help="also write every figure here")
    parser.add_argument("--pytorch", choices=sorted(JOBS), help=argparse.SUPPRESS)
    parser.add_argument("--job", help=argparse.SUPPRESS)
    parser.add_argument("--keep-grads", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    if arguments.pytorch:
        result = measure_pytorch(arguments.pytorch, arguments.job or JOBS[arguments.pytorch],
                                 not arguments.keep_grads)
        print(json.dumps(result))
        return

    workdir = tempfile.mkdtemp(prefix="memory_bench_")
    try:
        jobs = {}
        for name in arguments.jobs.split(","):
            if name == "charlm":  # The run needs the corpus beside the job.
                subprocess.run([PYTHON, os.path.join(ROOT, "demos", "charlm", "prepare.py"),
                                "--output", os.path.join(workdir, "data", "licenses.txt")],
                               check=True, capture_output=True)
                jobs[name] = os.path.join(workdir, "charlm.pbtxt")
                shutil.copy(JOBS[name], jobs[name])
            else:
                jobs[name] = JOBS[name]
        results = [measure(arguments, name, job) for name, job in jobs.items()]
        tiny = os.path.join(workdir, "tiny.pbtxt")
        with open(tiny, "w") as out:
            out.write(TINY_JOB)
        tiny_rss, tiny_anonymous = softwire_peak_rss(arguments.softwire, tiny, 4)
        fixed = {"planned": softwire_planned(arguments.softwire, tiny)["devices"][0],
                 "peak_rss_bytes": tiny_rss, "peak_anonymous_bytes": tiny_anonymous,
                 "rss_breakdown": softwire_rss_breakdown(arguments.softwire, tiny, 2000)}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print_table(results)
    parts = fixed["rss_breakdown"] or {}
    print(f"tiny job (the fixed overhead): planned {fixed['planned']['planned_bytes']:,} B, peak RSS"
          f" {mib(fixed['peak_rss_bytes'])} MiB (anonymous {mib(fixed['peak_anonymous_bytes'])} MiB);"
          " resident at the fullest smaps sample of a 2000-step"
          " run: " + ", ".join(f"{k} {mib(v)}" for k, v in parts.items() if isinstance(v, int)) +
          " (MiB)")
    if arguments.json:
        with open(arguments.json, "w") as out:
            json.dump({"jobs": results, "tiny": fixed}, out, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
