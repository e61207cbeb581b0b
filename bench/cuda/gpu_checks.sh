#!/usr/bin/env bash
# Issue 13's checks on a GPU machine, in one call of the device tool (docs/CUDA.md, "GPU
# sessions"): the GPU tests, the MLP's losses on cuda against cpu, the queue benchmark, the
# 4x4096 MLP's throughput (max_in_flight 1 and 4, TF32 off and on, with a trace) and PyTorch's
# on the same GPU; the charlm transformer's losses against cpu and its throughput
# (gpu_charlm_checks.sh, which needs demos/charlm/data carried too). Run from the repository
# root with the bundle carried:
#   bench/cuda/gpu_checks.sh [SECTION...]   (OUT: where logs go; default /tmp/softwire-gpu-out)
# SECTION: tests, losses, charlm, queue, mlp4096, pytorch, memcheck (default: all, in that
# order).
# Every step is bounded in time and the script goes on when one fails; the summary is last.
set -u
sections=" ${*:-tests losses charlm queue mlp4096 pytorch memcheck} "
out="${OUT:-/tmp/softwire-gpu-out}"
mkdir -p "$out"
run=.gpu-bundle/run
log="$out/session.log"
source "$(dirname "${BASH_SOURCE[0]}")/gpu_steps.sh"

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv \
  | tee -a "$log"
lscpu | grep -m1 'Model name' | tee -a "$log"
$run softwire --help > /dev/null 2>> "$log" || ldd /tmp/softwire-gpu-bundle/bin/softwire >> "$log"

if want tests; then
  step device_test 120 $run runtime_cuda_device_test
  step kernels_test 240 $run cuda_kernels_gpu_test
  grep -E '^\[  (FAILED|PASSED|SKIPPED) +\] [^(]*$|relative error|differ from' "$log" | tail -60
fi

if want losses; then
step mlp_cuda 120 $run softwire run bench/training/mlp.pbtxt --cluster 1cuda --steps 20 \
  --quiet --metrics-out "$out/mlp_cuda.jsonl"
step mlp_cpu 120 $run softwire run bench/training/mlp.pbtxt --steps 20 --quiet \
  --metrics-out "$out/mlp_cpu.jsonl"
python3 - "$out/mlp_cuda.jsonl" "$out/mlp_cpu.jsonl" <<'PY' 2>&1 | tee -a "$log"
import json, sys
def losses(path):
    try:
        return [json.loads(line)["loss"] for line in open(path) if line.strip()]
    except Exception as error:
        return str(error)
cuda, cpu = losses(sys.argv[1]), losses(sys.argv[2])
if isinstance(cuda, str) or isinstance(cpu, str) or not cuda:
    print("mlp losses: cannot compare:", cuda if isinstance(cuda, str) else cpu)
else:
    worst = max(abs(a - b) / abs(b) for a, b in zip(cuda, cpu))
    print(f"mlp losses cuda vs cpu: {len(cuda)} steps, worst relative difference {worst:.3g}; "
          f"first {cuda[0]:.6f} / {cpu[0]:.6f}, last {cuda[-1]:.6f} / {cpu[-1]:.6f}")
PY
fi

if want charlm; then
  OUT="$out" bench/cuda/gpu_charlm_checks.sh
  note "charlm: exit $? (log: $out/charlm.log)"
fi

want queue && step queue_bench 180 $run cuda_queue_bench --repeats 5

if want mlp4096; then
# Stream-ordered edges (the default) against completions only, in alternation, twice; then
# TF32. Same kernels either way: the final losses must be equal.
for round in 1 2; do
  for flags in "--max-in-flight 1" "--max-in-flight 1 --no-stream-order" "--max-in-flight 4" \
               "--max-in-flight 4 --no-stream-order"; do
    step "mlp4096 $flags (round $round)" 180 $run softwire run bench/cuda/mlp4096.pbtxt \
      --cluster 1cuda --steps 300 --log-every 100 $flags
    grep -E '^(step 300|done)' "$log" | tail -2
  done
done
for flags in "--max-in-flight 1 --cuda-tf32" "--max-in-flight 1 --cuda-tf32 --no-stream-order" \
             "--max-in-flight 4 --cuda-tf32"; do
  step "mlp4096 $flags" 180 $run softwire run bench/cuda/mlp4096.pbtxt --cluster 1cuda \
    --steps 300 --log-every 100 $flags
  grep -E '^(step 300|done)' "$log" | tail -2
done
echo "final losses of the float32 runs (must all be equal):" | tee -a "$log"
grep -A8 -E '^---- mlp4096 --max-in-flight [14]( --no-stream-order)? \(round' "$log" \
  | grep -oE 'final loss [0-9.]+' | sort | uniq -c | tee -a "$log"
step mlp4096_trace 180 $run softwire run bench/cuda/mlp4096.pbtxt --cluster 1cuda --steps 40 \
  --quiet --trace "$out/mlp4096.trace.json" --trace-steps 20:24
fi
want pytorch && step pytorch 240 python3 bench/cuda/pytorch_mlp4096.py


echo "==== summary" | tee -a "$log"
printf '%s\n' "${summary[@]}"
grep -E '^(mlp losses|done:|\{"gpu")' "$log"
grep -E '^(charlm losses|done:)' "$out/charlm.log" 2> /dev/null

# Last, so its time takes nothing from the figures: the kernels under compute-sanitizer.
if want memcheck && command -v compute-sanitizer > /dev/null; then
  step kernels_memcheck 150 compute-sanitizer --tool memcheck --target-processes all \
    $run cuda_kernels_gpu_test
  grep -E 'ERROR SUMMARY|Invalid|FAILED' "$log" | sort | uniq -c | head -20
fi

# What the device tool brings back is at most 8 files: the logs hold what the rest said.
rm -f "$out"/*.jsonl "$out"/*.svg
