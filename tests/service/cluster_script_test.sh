#!/usr/bin/env bash
# scripts/cluster end to end: `up 2` prints a server address that takes a job on its nodes,
# `status` lists both nodes, a second `up` is refused, `down` stops every process it started.
# Usage: cluster_script_test.sh SOFTWIRE_BINARY REPOSITORY_ROOT
set -euo pipefail
softwire="$1"
root="$2"
export SOFTWIRE_BIN="$softwire"
export SOFTWIRE_CLUSTER_DIR="$(mktemp -d)/cluster"
cluster="$root/scripts/cluster"
fail() { echo "FAIL: $*"; for f in "$SOFTWIRE_CLUSTER_DIR"/*.log; do echo "== $f"; cat "$f"; done; exit 1; }
trap '"$cluster" down >/dev/null 2>&1 || true' EXIT

address="$("$cluster" up 2 | tail -n 1)"
[[ "$address" =~ ^127\.0\.0\.1:[0-9]+$ ]] || fail "up printed '$address', not an address"
status="$("$cluster" status)"
grep -q "^node0 .*cpu:0" <<<"$status" || fail "status lists no node0: $status"
grep -q "^node1 .*cpu:0" <<<"$status" || fail "status lists no node1: $status"
if "$cluster" up 2 >/dev/null 2>&1; then fail "a second up was not refused"; fi

job="$SOFTWIRE_CLUSTER_DIR/tiny.pbtxt"
cat >"$job" <<'JOB'
name: "tiny"
source {
  name: "data"
  output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: 4 }
  output { name: "labels" dtype: DATA_TYPE_INT32 }
  synthetic { seed: 7 int_high: 3 }
}
variable {
  name: "w"
  dtype: DATA_TYPE_FLOAT32
  dims: [4, 3]
  initializer { normal { stddev: 0.1 seed: 1 } }
}
op { name: "fc" type: "matmul" input: ["x", "w"] output: "logits" }
op { name: "xent" type: "softmax_cross_entropy" input: ["logits", "labels"] output: "losses" }
op { name: "mean" type: "reduce_mean" input: "losses" output: "loss" }
train {
  loss: "loss"
  optimizer { sgd { learning_rate: 0.1 } }
  steps: 4
  micro_batch_size: 8
  micro_batches_per_step: 2
}
JOB
out="$("$softwire" submit "$job" --to "$address" 2>&1)" || fail "submit failed: $out"
grep -q "done: 4 steps" <<<"$out" || fail "the job did not finish: $out"

pids="$(cat "$SOFTWIRE_CLUSTER_DIR"/*.pid)"
"$cluster" down >/dev/null
for pid in $pids; do
  if kill -0 "$pid" 2>/dev/null; then fail "pid $pid still runs after down"; fi
done
[[ -z "$(ls "$SOFTWIRE_CLUSTER_DIR"/*.pid 2>/dev/null)" ]] || fail "pid files left after down"
echo "PASS"
