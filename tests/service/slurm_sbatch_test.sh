#!/usr/bin/env bash
# scripts/slurm/softwire.sbatch for real, on a one-host Slurm cluster made here: munged,
# slurmctld and slurmd (Debian's slurm-wlm) with a generated slurm.conf and munge key, on free
# loopback ports, in a folder of their own. `sbatch --nodes 1 --ntasks-per-node 2` runs the
# pipeline-parallel MLP (pp 2) on the two node agents the script starts; its per-step losses are
# `softwire run --cluster 2x1cpu --pp 2`'s. Every daemon is stopped by its pid, whatever happens.
# Skips (77), saying why, without root or without slurm-wlm installed.
# Usage: slurm_sbatch_test.sh SOFTWIRE_BINARY REPOSITORY_ROOT
set -euo pipefail
softwire="$1"
root="$2"
(( EUID == 0 )) || { echo "SKIP: a one-host Slurm cluster needs root (uid $EUID)"; exit 77; }
for daemon in munged slurmctld slurmd sbatch sinfo; do
  command -v "$daemon" >/dev/null ||
    { echo "SKIP: no $daemon (Debian: apt-get install slurm-wlm)"; exit 77; }
done

work="$(mktemp -d)"
chmod 755 "$work"
cleanup() {
  local pidfile pid
  for pidfile in "$work"/slurmd.pid "$work"/slurmctld.pid "$work"/munged.pid; do
    [[ -f "$pidfile" ]] || continue
    pid="$(cat "$pidfile")"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  [[ -n "${SOFTWIRE_TEST_KEEP:-}" ]] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() {
  echo "FAIL: $*"
  for f in "$work"/*.log "$work"/*.out "$work"/softwire-*/*.log; do
    [[ -f "$f" ]] && { echo "== $f"; tail -n 20 "$f"; }
  done
  exit 1
}

# Two free loopback ports for slurmctld and slurmd.
read -r ctld_port slurmd_port < <(/usr/bin/python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

dd if=/dev/urandom of="$work/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge.key"
munged --force --socket="$work/munge.sock" --key-file="$work/munge.key" \
  --log-file="$work/munged.log" --pid-file="$work/munged.pid" --seed-file="$work/munge.seed" ||
  fail "munged did not start"

host="$(hostname -s)"
mkdir -p "$work/state" "$work/spool"
cat >"$work/slurm.conf" <<EOF
ClusterName=softwire-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge.sock
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF="$work/slurm.conf"
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
for (( waited = 0; ; waited++ )); do
  [[ "$(sinfo -h -o %t 2>/dev/null)" == idle ]] && break
  (( waited < 300 )) || fail "the Slurm node is not idle after 30 s: $(sinfo 2>&1)"
  sleep 0.1
done
echo "one-host Slurm up: $(sinfo -h -o '%P %a %D %t %N')"

job="$root/bench/training/mlp.pbtxt"
settings=(--pp 2 --micro-batches 4 --steps 4)
timeout 120 "$softwire" run "$job" --cluster 2x1cpu "${settings[@]}" \
  --metrics-out "$work/run.jsonl" >"$work/run.out" 2>&1 || fail "run failed: $(cat "$work/run.out")"
cd "$work"
SOFTWIRE_BIN="$softwire" timeout 120 sbatch --wait --time=5 --nodes 1 --ntasks-per-node 2 \
  --output="$work/sbatch.out" "$root/scripts/slurm/softwire.sbatch" "$job" "${settings[@]}" \
  --metrics-out "$work/submit.jsonl" >"$work/submitted.log" 2>&1 ||
  fail "the batch job failed: $(cat "$work/submitted.log")"
grep -q "2 node agents joined" "$work/sbatch.out" || fail "the agents did not join"
grep -q "done: 4 steps" "$work/sbatch.out" || fail "the job did not finish"

losses() { grep -o '"loss":[^,}]*' "$1" | tr '\n' ' '; }
expected="$(losses "$work/run.jsonl")"
[[ "$(losses "$work/submit.jsonl")" == "$expected" ]] ||
  fail "the losses differ: run $expected; sbatch $(losses "$work/submit.jsonl")"
echo "losses: $expected"
for f in "$work"/softwire-*/node0.log "$work"/softwire-*/node1.log "$work"/softwire-*/server.log; do
  grep -q "SIGTERM" "$f" || fail "$(basename "$f") was not stopped by SIGTERM"
done
echo "PASS"
