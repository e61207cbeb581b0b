#!/usr/bin/env bash
# scripts/cluster up 2 --netns --link-rate 1gbit: two nodes in network namespaces of their own,
# the server on the bridge's address behind TLS and a token. The pipeline-parallel MLP (pp 2)
# gives the per-step losses of `softwire run --cluster 2x1cpu --pp 2` in one process, its
# activations crossing the veth links (counted on them); a call without the token is refused;
# `down` leaves no process, namespace or link. Skips (77) where namespaces are not permitted.
# Every command is bounded by `timeout`, so the script ends and cleans up well before ctest's
# limit (a ctest timeout kills without a trap).
# Usage: netns_cluster_test.sh SOFTWIRE_BINARY REPOSITORY_ROOT
set -euo pipefail
softwire="$1"
root="$2"
cluster="$root/scripts/cluster"
if ! why="$("$root/scripts/cluster-netns" check)"; then
  echo "SKIP: $why"
  exit 77
fi
export SOFTWIRE_BIN="$softwire"
work="$(mktemp -d)"
export SOFTWIRE_CLUSTER_DIR="$work/cluster"
cleanup() {
  timeout 60 "$cluster" down >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() {
  echo "FAIL: $*"
  for f in "$SOFTWIRE_CLUSTER_DIR"/*.log; do echo "== $f"; tail -n 20 "$f"; done
  exit 1
}
bounded() { timeout 60 "$@"; }

if "$cluster" up 2 --link-rate 1gbit >/dev/null 2>&1; then fail "--link-rate without --netns was taken"; fi

address="$(bounded "$cluster" up 2 --netns --link-rate 1gbit | tail -n 1)" || fail "up --netns failed"
[[ "$address" =~ ^10\.231\.[0-9]+\.1:[0-9]+$ ]] || fail "up printed '$address', not the bridge's address"
# shellcheck source=/dev/null
source "$SOFTWIRE_CLUSTER_DIR/netns.env"
read -r -a client <"$SOFTWIRE_CLUSTER_DIR/client.flags"

status="$(bounded "$cluster" status)" || fail "status failed: $status"
for k in 0 1; do
  grep -q "^netns ${NETNS_PREFIX}-node$k .*10\.231\.[0-9]*\.$((k + 2))/24 tbf 1Gbit" <<<"$status" ||
    fail "status shows no shaped namespace for node$k: $status"
  grep -q "^node$k .*10\.231\.[0-9]*\.$((k + 2)):[0-9]* " <<<"$status" ||
    fail "node$k's data plane is not on its namespace's address: $status"
done

# Without the token the server refuses the call.
if out="$(bounded "$softwire" jobs --to "$address" --tls-ca "$SOFTWIRE_CLUSTER_DIR/tls/ca.pem" 2>&1)"; then
  fail "a call without the token was served: $out"
fi
grep -qi "token\|unauthenticated" <<<"$out" || fail "the refusal does not say why: $out"

job="$root/bench/training/mlp.pbtxt"
settings=(--pp 2 --micro-batches 4 --steps 4)
bounded "$softwire" run "$job" --cluster 2x1cpu "${settings[@]}" --metrics-out "$work/run.jsonl" \
  >"$work/run.out" 2>&1 || fail "run failed: $(cat "$work/run.out")"
sent_before="$(cat "/sys/class/net/${NETNS_BRIDGE%br}n0/statistics/rx_bytes")"
bounded "$softwire" submit "$job" --to "$address" "${client[@]}" "${settings[@]}" \
  --metrics-out "$work/submit.jsonl" >"$work/submit.out" 2>&1 ||
  fail "submit failed: $(cat "$work/submit.out")"
sent="$(( $(cat "/sys/class/net/${NETNS_BRIDGE%br}n0/statistics/rx_bytes") - sent_before ))"
for k in 0 1; do
  grep -q "node$k/cpu:0" "$work/submit.out" || fail "the plan does not span node$k: $(cat "$work/submit.out")"
done

losses() { grep -o '"loss":[^,}]*' "$1" | tr '\n' ' '; }
expected="$(losses "$work/run.jsonl")"
[[ "$(grep -o loss <<<"$expected" | wc -l)" == 4 ]] || fail "run reported no 4 losses: $expected"
[[ "$(losses "$work/submit.jsonl")" == "$expected" ]] ||
  fail "the losses differ: run $expected; submit $(losses "$work/submit.jsonl")"
# Stage 0 sends 4 steps x 4 micro-batches of 256 x 1024 float32 activations (1 MiB each).
(( sent >= 16 * 1024 * 1024 )) || fail "only $sent bytes left node0 over its veth"
echo "losses: $expected"
echo "node0 sent $sent bytes over its veth"

pids="$(cat "$SOFTWIRE_CLUSTER_DIR"/*.pid)"
bounded "$cluster" down >/dev/null || fail "down failed"
for pid in $pids; do
  if kill -0 "$pid" 2>/dev/null; then fail "pid $pid still runs after down"; fi
done
for k in 0 1; do
  [[ ! -e "/run/netns/${NETNS_PREFIX}-node$k" ]] || fail "namespace ${NETNS_PREFIX}-node$k is left"
  if ip link show "${NETNS_BRIDGE%br}n$k" >/dev/null 2>&1; then fail "veth of node$k is left"; fi
done
if ip link show "$NETNS_BRIDGE" >/dev/null 2>&1; then fail "bridge $NETNS_BRIDGE is left"; fi
echo "PASS"
