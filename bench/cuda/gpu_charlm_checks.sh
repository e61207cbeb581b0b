#!/usr/bin/env bash
# The transformer (demos/charlm) on a GPU machine, for issue 13 (docs/CUDA.md, "The
# transformer on cuda"): its per-step losses on `--cluster 1cuda` against the cpu's, and its
# throughput on cuda. Run from the repository root with the bundle carried (scripts/gpu-bundle
# of build/cli/softwire) and the job's data: demos/charlm/data/licenses.txt, which
# demos/charlm/prepare.py writes here (carry "demos/charlm/data"; it is made there from
# /usr/share/common-licenses when missing and the GPU image has those texts).
#   bench/cuda/gpu_charlm_checks.sh [SECTION...]   (OUT: where logs go; default
#   /tmp/softwire-gpu-out)
# SECTION: charlm_losses, charlm_speed (default: both). bench/cuda/gpu_checks.sh runs it as its
# charlm section. Every step is bounded in time; the script goes on when one fails.
#
# Losses: 20 steps of Adam, float32 products with TF32 off. Tolerance: 1e-4 relative per step.
# Each cuda kernel is within 1e-5 of its cpu kernel (cuda_kernels_gpu_test: sums reordered,
# expf), and 20 Adam steps carry those differences on through every weight; the MLP's losses
# agreed to 4.7e-7 over 20 steps, and a transformer has ~10x more reordered sums per step.
set -u
sections=" ${*:-charlm_losses charlm_speed} "
want() { [[ "$sections" == *" $1 "* ]]; }
out="${OUT:-/tmp/softwire-gpu-out}"
mkdir -p "$out"
run=.gpu-bundle/run
log="$out/charlm.log"
job=demos/charlm/charlm.pbtxt
status=0
step() {  # step NAME SECONDS COMMAND...: runs it bounded, appends its output to the log
  local name="$1" seconds="$2"; shift 2
  echo "---- $name: $*" >> "$log"
  local begin=$SECONDS
  timeout -k 5 "$seconds" "$@" >> "$log" 2>&1
  local rc=$?
  echo "== $name: exit $rc in $((SECONDS - begin)) s" | tee -a "$log"
  (( rc == 0 )) || status=1
  return $rc
}

if [[ ! -f demos/charlm/data/licenses.txt ]]; then
  python3 demos/charlm/prepare.py >> "$log" 2>&1 ||
    echo "== charlm: no demos/charlm/data/licenses.txt (carry demos/charlm/data)" | tee -a "$log"
fi

if want charlm_losses; then
  step charlm_cuda 180 $run softwire run "$job" --cluster 1cuda --steps 20 --quiet \
    --metrics-out "$out/charlm_cuda.jsonl"
  step charlm_cpu 180 $run softwire run "$job" --steps 20 --quiet \
    --metrics-out "$out/charlm_cpu.jsonl"
  python3 - "$out/charlm_cuda.jsonl" "$out/charlm_cpu.jsonl" <<'PY' 2>&1 | tee -a "$log"
import json, sys
TOLERANCE = 1e-4
def losses(path):
    try:
        return [json.loads(line)["loss"] for line in open(path) if line.strip()]
    except Exception as error:
        return str(error)
cuda, cpu = losses(sys.argv[1]), losses(sys.argv[2])
if isinstance(cuda, str) or isinstance(cpu, str) or not cuda or len(cuda) != len(cpu):
    print("charlm losses: cannot compare:", cuda if isinstance(cuda, str) else cpu)
    sys.exit(1)
differences = [abs(a - b) / abs(b) for a, b in zip(cuda, cpu)]
worst = max(differences)
print(f"charlm losses cuda vs cpu: {len(cuda)} steps, worst relative difference {worst:.3g} "
      f"at step {differences.index(worst)} (tolerance {TOLERANCE:g}); "
      f"first {cuda[0]:.6f} / {cpu[0]:.6f}, last {cuda[-1]:.6f} / {cpu[-1]:.6f}: "
      + ("PASS" if worst <= TOLERANCE else "FAIL"))
sys.exit(0 if worst <= TOLERANCE else 1)
PY
  (( PIPESTATUS[0] == 0 )) || status=1
fi

if want charlm_speed; then
  # ~20 s on an H200 if a step is ~50 ms; the first 100 steps warm up, `done:` is the run's
  # samples/s and the step lines give the later windows.
  for flags in "--max-in-flight 1" "--max-in-flight 4"; do
    step "charlm_speed $flags" 120 $run softwire run "$job" --cluster 1cuda --steps 400 \
      --log-every 100 $flags
    grep -E '^(step (100|200|300|400)/|done)' "$log" | tail -5
  done
fi
exit $status
